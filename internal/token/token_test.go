package token

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var urlSafe = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func TestNewIsThirtyTwoRandomBytesURLSafe(t *testing.T) {
	const n = 1000
	seen := make(map[string]bool, n)
	for range n {
		tok := New()
		s := tok.Reveal()
		if !urlSafe.MatchString(s) {
			t.Fatalf("New() = %q: not URL-safe base64 without padding", s)
		}
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("New() = %q: %v", s, err)
		}
		if len(b) != Size {
			t.Fatalf("New() decodes to %d bytes, want %d", len(b), Size)
		}
		if seen[s] {
			t.Fatalf("New() returned %q twice", s)
		}
		seen[s] = true
		if tok.IsZero() {
			t.Fatal("New() is zero")
		}
	}
}

func TestParseRevealAndEquality(t *testing.T) {
	tests := []struct {
		name     string
		a, b     Token
		wantEq   bool
		wantZero bool
	}{
		{"same text", Parse("abc"), Parse("abc"), true, false},
		{"other text", Parse("abc"), Parse("abd"), false, false},
		{"empty is zero", Parse(""), Token{}, true, true},
		{"new vs parse of its text", func() Token { return Parse("x") }(), Parse("x"), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a == tt.b; got != tt.wantEq {
				t.Errorf("a == b: got %v, want %v", got, tt.wantEq)
			}
			if got := tt.a.IsZero(); got != tt.wantZero {
				t.Errorf("IsZero: got %v, want %v", got, tt.wantZero)
			}
			if got := Parse(tt.a.Reveal()); got != tt.a {
				t.Errorf("Parse(Reveal()) changed the token")
			}
		})
	}
	tok := New()
	if Parse(tok.Reveal()) != tok {
		t.Error("Parse(New().Reveal()) != the token")
	}
}

func TestHashMatches(t *testing.T) {
	tok := New()
	other := New()
	s := tok.Reveal()
	lastFlipped := s[:len(s)-1] + string(s[len(s)-1]^1)
	h := tok.Hash()
	hLastByte := h
	hLastByte[len(hLastByte)-1] ^= 1

	tests := []struct {
		name string
		h    Hash
		tok  Token
		want bool
	}{
		{"own token", h, tok, true},
		{"parsed text of own token", h, Parse(s), true},
		{"another token", h, other, false},
		{"last character differs", h, Parse(lastFlipped), false},
		{"hash differs in last byte", hLastByte, tok, false},
		{"empty token", h, Token{}, false},
		{"zero hash, a token", Hash{}, tok, false},
		{"zero hash, empty token", Hash{}, Token{}, false},
		{"hash of the empty text, empty token", Token{}.Hash(), Token{}, false},
		{"hash of the empty text, parsed empty", Token{}.Hash(), Parse(""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.Matches(tt.tok); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHashForm(t *testing.T) {
	tok := Parse("abc")
	// SHA-256("abc"), a published test vector.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := tok.Hash().String(); got != want {
		t.Errorf("Hash().String() = %s, want %s", got, want)
	}
	if _, err := hex.DecodeString(tok.Hash().String()); err != nil {
		t.Errorf("Hash().String() is not hex: %v", err)
	}
	if !(Hash{}).IsZero() || tok.Hash().IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestEqualServesGoCmp(t *testing.T) {
	type req struct {
		Name  string
		Owner Token
	}
	a := New()
	if !cmp.Equal(req{"r", a}, req{"r", Parse(a.Reveal())}) {
		t.Error("cmp.Equal of equal tokens = false")
	}
	if cmp.Equal(req{"r", a}, req{"r", New()}) {
		t.Error("cmp.Equal of different tokens = true")
	}
	// A failing diff does show the texts (cmp bypasses String when both
	// sides print alike); that only reaches the output of a failing test.
	if cmp.Diff(req{"r", a}, req{"r", New()}) == "" {
		t.Error("cmp.Diff of different tokens is empty")
	}
}
