package recap

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSecretValuesFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    []string
	}{
		{"token", []string{"GITHUB_TOKEN=ghp_abcdefghijklmnop"}, []string{"ghp_abcdefghijklmnop"}},
		{"secret, password, passwd", []string{"CLIENT_SECRET=aaaaaaaaaaaa1", "PGPASSWORD=bbbbbbbbbbbb22", "MY_PASSWD=cccccccccccc333"},
			[]string{"cccccccccccc333", "bbbbbbbbbbbb22", "aaaaaaaaaaaa1"}},
		{"key, credential, session, cookie, auth",
			[]string{"OPENAI_API_KEY=k-123456789012", "GOOGLE_CREDENTIALS=c-123456789012", "AWS_SESSION_TOKEN=s-123456789012",
				"SITE_COOKIE=o-123456789012", "NPM_AUTH=a-123456789012"},
			[]string{"a-123456789012", "c-123456789012", "k-123456789012", "o-123456789012", "s-123456789012"}},
		{"pass as a whole word", []string{"DB_PASS=p-123456789012", "COMPASS_HOME=/opt/compass/home"}, []string{"p-123456789012"}},
		{"names compared without case", []string{"github_token=lower-123456789"}, []string{"lower-123456789"}},
		{"12-character minimum", []string{"API_TOKEN=12345678901", "API_KEY=123456789012"}, []string{"123456789012"}},
		{"minimum counts characters, not bytes", []string{"API_TOKEN=ééééééééééé"}, nil},
		{"allow-list", []string{
			"SSH_AUTH_SOCK=/tmp/ssh-XXXXabcdef/agent.123", "GPG_AGENT_INFO=/run/user/1000/gnupg/S.gpg-agent:0:1",
			"SESSION_MANAGER=local/host:@/tmp/.ICE-unix/1234", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
			"XDG_SESSION_TYPE=wayland-session", "XDG_SESSION_ID=session-12345", "DESKTOP_SESSION=ubuntu-wayland",
			"XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth", "GIT_AUTHOR_NAME=Ada Lovelace Byron", "GIT_ASKPASS=/usr/lib/git-core/askpass",
			"XKB_KEYMAP=us-intl-altgr-dead"},
			nil},
		{"not secret-looking", []string{"HOME=/home/someone-long", "PATH=/usr/local/bin:/usr/bin"}, nil},
		{"deduplicated, longest first", []string{"A_TOKEN=same-value-12345", "B_TOKEN=same-value-12345", "C_KEY=longer-value-123456"},
			[]string{"longer-value-123456", "same-value-12345"}},
		{"trimmed too", []string{"A_TOKEN=  padded-value-1234 "}, []string{"  padded-value-1234 ", "padded-value-1234"}},
		{"malformed entries", []string{"NOEQUALS", "=C:=C:\\windows-value", "A_TOKEN="}, nil},
		{"value with =", []string{"DATABASE_DSN=postgres://u:p@h/db?x=1"}, []string{"postgres://u:p@h/db?x=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, SecretValuesFromEnv(tt.environ)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
