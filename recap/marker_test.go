package recap

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestMarkerForms checks which patterns get the byte-scan form and which
// literal prefilters the others.
func TestMarkerForms(t *testing.T) {
	tests := []struct {
		pattern string
		trailer bool
		lit     string
	}{
		{`\s*DONE\s*$`, true, "DONE"},
		{`DONE$`, true, "DONE"},
		{`<<END>>\z`, true, "<<END>>"},
		{`[ \t]*DONE.*$`, true, "DONE"},
		{`(?m)^DONE$`, false, "DONE"},
		{`(?i)done\s*$`, false, ""},
		{`DONE`, false, "DONE"},
		{`\s*(DONE|STOP)\s*$`, false, ""},
		{`(?:STOP\s*)?DONE$`, false, "DONE"},
		{`DONE\s*?$`, false, "DONE"},
	}
	posix := newMarker(regexp.MustCompilePOSIX(`DONE$`)) // $ is a line end there
	if posix.tail != nil {
		t.Errorf("POSIX DONE$: trailer form, want the regexp")
	}
	for _, tt := range tests {
		m := newMarker(regexp.MustCompile(tt.pattern))
		if got := m.tail != nil; got != tt.trailer {
			t.Errorf("%s: trailer form %v, want %v", tt.pattern, got, tt.trailer)
		}
		if got := string(m.lit); got != tt.lit {
			t.Errorf("%s: literal %q, want %q", tt.pattern, got, tt.lit)
		}
	}
}

// TestMarkerStripMatchesRegexp checks the byte-scan form against the regexp
// it stands for, on random texts made of the characters that matter.
func TestMarkerStripMatchesRegexp(t *testing.T) {
	patterns := []string{`\s*DONE\s*$`, `DONE$`, `[ \t]*DONE.*$`, `\s*DO\s*\z`, `b*ba\s*$`, `\w*DONE$`, `.*DO\s*$`}
	alphabet := []string{"DONE", "DO", "NE", " ", "\n", "\t", "x", "é", "a", "b", "ba", "\xff"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		m := newMarker(re)
		if m.tail == nil {
			t.Fatalf("%s: no trailer form", p)
		}
		for range 3000 {
			var b strings.Builder
			for range rng.IntN(12) {
				b.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			s := b.String()
			want := string(re.ReplaceAll([]byte(s), nil))
			if got := string(m.tail.strip([]byte(s))); got != want {
				t.Fatalf("%s on %q: got %q, want %q", p, s, got, want)
			}
		}
	}
}

// TestMarkerStripFallback checks the regexp path, in place and repeated.
func TestMarkerStripFallback(t *testing.T) {
	r := newRedactor(nil, []*regexp.Regexp{regexp.MustCompile(`(?m)^STOP$\n?`), nil, regexp.MustCompile(`<x>`)})
	got := string(r.strip([]byte("a\nSTOP\nb<x><x>c\nSTOP")))
	if want := "a\nbc\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
