package baton

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
		tok := NewToken()
		s := tok.Reveal()
		if !urlSafe.MatchString(s) {
			t.Fatalf("NewToken() = %q: not URL-safe base64 without padding", s)
		}
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("NewToken() = %q: %v", s, err)
		}
		if len(b) != tokenSize {
			t.Fatalf("NewToken() decodes to %d bytes, want %d", len(b), tokenSize)
		}
		if seen[s] {
			t.Fatalf("NewToken() returned %q twice", s)
		}
		seen[s] = true
		if tok.IsZero() {
			t.Fatal("NewToken() is zero")
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
		{"same text", ParseToken("abc"), ParseToken("abc"), true, false},
		{"other text", ParseToken("abc"), ParseToken("abd"), false, false},
		{"empty is zero", ParseToken(""), Token{}, true, true},
		{"new vs parse of its text", func() Token { return ParseToken("x") }(), ParseToken("x"), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a == tt.b; got != tt.wantEq {
				t.Errorf("a == b: got %v, want %v", got, tt.wantEq)
			}
			if got := tt.a.IsZero(); got != tt.wantZero {
				t.Errorf("IsZero: got %v, want %v", got, tt.wantZero)
			}
			if got := ParseToken(tt.a.Reveal()); got != tt.a {
				t.Errorf("ParseToken(Reveal()) changed the token")
			}
		})
	}
	tok := NewToken()
	if ParseToken(tok.Reveal()) != tok {
		t.Error("ParseToken(NewToken().Reveal()) != the token")
	}
}

func TestHashMatches(t *testing.T) {
	tok := NewToken()
	other := NewToken()
	s := tok.Reveal()
	lastFlipped := s[:len(s)-1] + string(s[len(s)-1]^1)
	h := tok.Hash()
	hLastByte := h
	hLastByte[len(hLastByte)-1] ^= 1

	tests := []struct {
		name string
		h    TokenHash
		tok  Token
		want bool
	}{
		{"own token", h, tok, true},
		{"parsed text of own token", h, ParseToken(s), true},
		{"another token", h, other, false},
		{"last character differs", h, ParseToken(lastFlipped), false},
		{"hash differs in last byte", hLastByte, tok, false},
		{"empty token", h, Token{}, false},
		{"zero hash, a token", TokenHash{}, tok, false},
		{"zero hash, empty token", TokenHash{}, Token{}, false},
		{"hash of the empty text, empty token", Token{}.Hash(), Token{}, false},
		{"hash of the empty text, parsed empty", Token{}.Hash(), ParseToken(""), false},
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
	tok := ParseToken("abc")
	// SHA-256("abc"), a published test vector.
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := tok.Hash().String(); got != want {
		t.Errorf("Hash().String() = %s, want %s", got, want)
	}
	if _, err := hex.DecodeString(tok.Hash().String()); err != nil {
		t.Errorf("Hash().String() is not hex: %v", err)
	}
	if tok.Hash() == (TokenHash{}) {
		t.Error("Hash() is zero")
	}
}

func TestEqualServesGoCmp(t *testing.T) {
	type req struct {
		Name  string
		Owner Token
	}
	a := NewToken()
	if !cmp.Equal(req{"r", a}, req{"r", ParseToken(a.Reveal())}) {
		t.Error("cmp.Equal of equal tokens = false")
	}
	if cmp.Equal(req{"r", a}, req{"r", NewToken()}) {
		t.Error("cmp.Equal of different tokens = true")
	}
	// A failing diff does show the texts (cmp bypasses String when both
	// sides print alike); that only reaches the output of a failing test.
	if cmp.Diff(req{"r", a}, req{"r", NewToken()}) == "" {
		t.Error("cmp.Diff of different tokens is empty")
	}
}
