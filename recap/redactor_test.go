package recap

import (
	"regexp"
	"testing"
)

func TestRedactorClean(t *testing.T) {
	clean := Cleaner(Limits{
		Markers: []*regexp.Regexp{regexp.MustCompile(`\s*DONE\s*$`), regexp.MustCompile(`<<CUT>>`)},
		Secrets: []string{"s3cr3t-staging-token-77"},
	})
	tests := []struct{ name, in, want string }{
		{"plain", "  hello\nworld  \n", "hello\nworld"},
		{"token shape", "push with ghp_0123456789abcdefghijABCDEFGHIJ012345 now", "push with [REDACTED] now"},
		{"configured secret", "use s3cr3t-staging-token-77.", "use [REDACTED]."},
		{"trailing marker", "all good\nDONE", "all good"},
		{"secret joined by a marker", "s3cr3t-stag<<CUT>>ing-token-77", "[REDACTED]"},
		{"invalid utf-8", "a\xffb", "a\uFFFDb"},
		{"only a marker", "DONE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(clean([]byte("x:"), tt.in)); got != "x:"+tt.want {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, "x:"+tt.want)
			}
		})
	}
	if !IsHeartbeat("[heartbeat]") || IsHeartbeat("heartbeat of the system is fine") || !isBlank(" \n") || isBlank(" a") {
		t.Error("IsHeartbeat/isBlank disagree with the replay's rules")
	}
}
