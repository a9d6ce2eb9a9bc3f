package recap

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"

	"github.com/google/go-cmp/cmp"
)

// redactText runs the whole pipeline on one complete text.
func redactText(text string, lim Limits) string {
	r := newRedactor(lim.Secrets, lim.Markers)
	var h head
	h.reset(1<<20, r.lookahead)
	h.add(text)
	out, _, _ := r.clip(nil, &h, 1<<20)
	return string(out)
}

// TestRedactShapes has one row per built-in token shape, and rows for what
// must be left alone.
func TestRedactShapes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ghp_", "token ghp_0123456789abcdefghijABCDEFGHIJ012345 here", "token [REDACTED] here"},
		{"gho_", "gho_0123456789abcdefghijABCDEFGHIJ012345", "[REDACTED]"},
		{"ghs_", "x=ghs_0123456789abcdefghijABCDEFGHIJ012345;", "x=[REDACTED];"},
		{"ghu_", "(ghu_0123456789abcdefghijABCDEFGHIJ012345)", "([REDACTED])"},
		{"ghr_", "ghr_0123456789abcdefghijABCDEFGHIJ012345.", "[REDACTED]."},
		{"github_pat_", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTU ok",
			"[REDACTED] ok"},
		{"sk-ant-", "ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789-ABCDEF_ghijk", "ANTHROPIC_API_KEY=[REDACTED]"},
		{"sk-", "key: sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345", "key: [REDACTED]"},
		{"AKIA", "aws AKIAIOSFODNN7EXAMPLE key", "aws [REDACTED] key"},
		{"ASIA", "aws ASIAIOSFODNN7EXAMPLE key", "aws [REDACTED] key"},
		{"AIza", "maps AIzaSyA-0123456789abcdefghijklmnopqrstu end", "maps [REDACTED] end"},
		{"ya29.", "Bearer ya29.a0AfH6SMBx-0123456789abcdefghij.klmnop", "Bearer [REDACTED]"},
		{"xoxb-", "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack [REDACTED]"},
		{"xoxp-", "xoxp-1234567890-abcdef", "[REDACTED]"},
		{"glpat-", "glpat-AbCdEfGhIjKlMnOpQrSt and more", "[REDACTED] and more"},
		{"a token glued to a word", "tokenghp_0123456789abcdefghijABCDEFGHIJ012345", "token[REDACTED]"},
		{"sk- ending a word is not a token", "a task-force-of-twenty-people-and-more", "a task-force-of-twenty-people-and-more"},
		{"short sk- is not a token", "sk-learn is a library", "sk-learn is a library"},
		{"short ghp_ is not a token", "ghp_short", "ghp_short"},
		{"AKIA needs 16 more", "AKIA1234 is short", "AKIA1234 is short"},
		{"two tokens", "ghp_0123456789abcdefghij01 and glpat-AbCdEfGhIjKlMnOpQrSt", "[REDACTED] and [REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, redactText(tt.in, Limits{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRedactSecrets checks configured values, and that overlapping secrets
// are redacted as one so that neither leaks a piece of the other.
func TestRedactSecrets(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"one", []string{"hunter2hunter2"}, "pw=hunter2hunter2!", "pw=[REDACTED]!"},
		{"every occurrence", []string{"abcdefghijkl"}, "abcdefghijkl abcdefghijkl", "[REDACTED] [REDACTED]"},
		{"overlapping", []string{"abcdefgh1234", "1234zyxwvuts"}, "xabcdefgh1234zyxwvutsx", "x[REDACTED]x"},
		{"nested", []string{"abcdefghijklmnop", "efghijkl"}, "abcdefghijklmnop efghijkl", "[REDACTED] [REDACTED]"},
		{"blank values are ignored", []string{"", "   "}, "a   b", "a   b"},
		{"padded values are redacted trimmed too", []string{"  hunter2hunter2\n"}, "hunter2hunter2 at the start", "[REDACTED] at the start"},
		{"duplicates", []string{"hunter2hunter2", "hunter2hunter2"}, "hunter2hunter2", "[REDACTED]"},
		{"multi-byte", []string{"пароль-секрет"}, "мой пароль-секрет тут", "мой [REDACTED] тут"},
		{"joined by a removed marker", []string{"hunter2hunter2"}, "hunter2<<STOP>>hunter2", "[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := Limits{Secrets: tt.secrets, Markers: []*regexp.Regexp{regexp.MustCompile(`<<STOP>>`)}}
			if diff := cmp.Diff(tt.want, redactText(tt.in, lim)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRedactInvalidUTF8 checks that invalid bytes come out as U+FFFD and
// secrets around them are still found.
func TestRedactInvalidUTF8(t *testing.T) {
	got := redactText("a\xffb hunter2hunter2\xc3", Limits{Secrets: []string{"hunter2hunter2"}})
	if want := "a\uFFFDb [REDACTED]\uFFFD"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRedactEverywhere checks that a secret given anywhere in a handoff
// input is absent from the prompt.
func TestRedactEverywhere(t *testing.T) {
	const s = "Sup3rS3cretValue42"
	in := HandoffInput{
		Title:        "t " + s,
		Source:       store.Session{ID: s, Config: baton.EngineConfig{Engine: s, Model: s}, NativeID: s},
		Mission:      "m " + s,
		Report:       "r " + s,
		Instructions: []store.Instruction{{ID: s, State: s, Text: s}},
		Conversation: Input{Task: s, Ending: "e " + s, Events: slices.Values(events(transcript.User, s, transcript.Agent, s))},
		Limits:       HandoffLimits{Conversation: Limits{Secrets: []string{s}}},
	}
	out := HandoffPrompt(in)
	if strings.Contains(out, s) || strings.Contains(out, s[:8]) {
		t.Errorf("secret leaked:\n%s", out)
	}
	if n := strings.Count(out, baton.Redacted); n < 13 {
		t.Errorf("%d redactions, want at least 13:\n%s", n, out)
	}
}
