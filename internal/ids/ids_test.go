package ids

import (
	"regexp"
	"strings"
	"testing"
)

func TestNewShape(t *testing.T) {
	tests := []struct {
		prefix string
		want   *regexp.Regexp
	}{
		{"ses", regexp.MustCompile(`^ses_[a-z2-7]{26}$`)},
		{"hof", regexp.MustCompile(`^hof_[a-z2-7]{26}$`)},
		{"", regexp.MustCompile(`^_[a-z2-7]{26}$`)},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			for range 100 {
				if id := New(tt.prefix); !tt.want.MatchString(id) {
					t.Fatalf("New(%q) = %q, want %s", tt.prefix, id, tt.want)
				}
			}
		})
	}
}

func TestRandomLengthAndCharset(t *testing.T) {
	for _, n := range []int{0, 1, 5, 16, 32} {
		s := Random(n)
		if want := (n*8 + 4) / 5; len(s) != want {
			t.Errorf("Random(%d) has %d characters, want %d", n, len(s), want)
		}
		if strings.Trim(s, "abcdefghijklmnopqrstuvwxyz234567") != "" {
			t.Errorf("Random(%d) = %q: not lowercase base32", n, s)
		}
	}
}

func TestNewIsUnique(t *testing.T) {
	const n = 10000
	seen := make(map[string]bool, n)
	for range n {
		id := New("x")
		if seen[id] {
			t.Fatalf("New returned %q twice", id)
		}
		seen[id] = true
	}
}
