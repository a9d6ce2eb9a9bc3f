// Tokens: baton mints two kinds of secret, owner tokens of
// reservations and generation tokens of report-only turns.
//
// A Token is 32 bytes from crypto/rand in URL-safe base64 without padding.
// Only its SHA-256 (a TokenHash) is ever stored; comparison is constant-time.
// A Token redacts itself wherever it could be printed or logged: String,
// Format (every fmt verb, %#v included), MarshalText (encoding/json, a JSON
// map key, zap's reflection) and slog's LogValue all yield "[REDACTED]". Use Reveal to obtain the secret
// for the one place that must send it (an engine start request).
package baton

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"unique"
)

// Redacted is what a Token prints as.
const Redacted = "[REDACTED]"

// tokenSize is the number of random bytes in a token.
const tokenSize = 32

// Token is a secret. The zero value is the empty token, which matches no TokenHash.
// Tokens compare with == by their text.
//
// The text sits behind a pointer (a unique.Handle, which keeps == meaning
// "same text"): fmt prints the fields of a struct it cannot call methods on
// (a Token in an unexported field) verbatim, but prints a nested pointer
// only as an address, so the secret never reaches %v output that way.
type Token struct{ h unique.Handle[string] }

// NewToken returns a fresh random token.
func NewToken() Token {
	var b [tokenSize]byte
	// crypto/rand.Read never returns an error: it crashes the program
	// instead.
	_, _ = rand.Read(b[:])
	return ParseToken(base64.RawURLEncoding.EncodeToString(b[:]))
}

// ParseToken wraps a token received from a caller. It does not validate the
// shape: a malformed token simply matches no TokenHash.
// ParseToken("") is the zero Token.
func ParseToken(s string) Token {
	if s == "" {
		return Token{}
	}
	return Token{h: unique.Make(s)}
}

// Reveal returns the secret text. Call it only to hand the token to the one
// party that must hold it.
func (t Token) Reveal() string {
	if t.IsZero() {
		return ""
	}
	return t.h.Value()
}

// IsZero reports whether t is the empty token.
func (t Token) IsZero() bool { return t.h == unique.Handle[string]{} }

// Equal reports whether t and u are the same token, as t == u does. It lets
// go-cmp compare values that hold a Token (cmp calls Equal methods and
// otherwise refuses the unexported field).
func (t Token) Equal(u Token) bool { return t == u }

// Hash returns the SHA-256 of the token, the only form baton stores.
func (t Token) Hash() TokenHash { return TokenHash(sha256.Sum256([]byte(t.Reveal()))) }

// String returns Redacted.
func (t Token) String() string { return Redacted }

// Format writes Redacted whatever the verb, so %x or %q cannot encode the
// secret either.
func (t Token) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(Redacted)) }

// MarshalText returns Redacted: encoding/json writes a Token, as a value
// or a map key, as the JSON string "[REDACTED]", and so do zap.Any and
// zap.Reflect on a struct holding one.
func (t Token) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue makes slog print Redacted.
func (t Token) LogValue() slog.Value { return slog.StringValue(Redacted) }

// TokenHash is the SHA-256 of a token. The zero TokenHash matches no token.
type TokenHash [sha256.Size]byte

// Matches reports, in constant time, whether t hashes to h. The zero TokenHash and
// the empty token never match.
func (h TokenHash) Matches(t Token) bool {
	if h == (TokenHash{}) || t.IsZero() {
		return false
	}
	th := t.Hash()
	return subtle.ConstantTimeCompare(h[:], th[:]) == 1
}

// String returns the hash in hex; a hash is not a secret, but it is still
// kept out of API responses.
func (h TokenHash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText writes the hash as 64 hex digits (how the stores keep it).
func (h TokenHash) MarshalText() ([]byte, error) { return hex.AppendEncode(nil, h[:]), nil }

// UnmarshalText reads 64 hex digits; anything else is a baton.ErrInvalid.
func (h *TokenHash) UnmarshalText(b []byte) error {
	if hex.DecodedLen(len(b)) != len(h) {
		return Errorf(ErrInvalid, "baton: token hash of %d hex digits, want %d", len(b), 2*len(h))
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return Errorf(ErrInvalid, "baton: token hash: %v", err)
	}
	return nil
}
