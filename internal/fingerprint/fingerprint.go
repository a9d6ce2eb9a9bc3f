// Package fingerprint computes request fingerprints: the SHA-256 of the
// canonical JSON of a normalised request. Canonical means object keys sorted
// and no insignificant white space, so two clients that send the same request
// with fields in another order agree. Callers fill defaults before calling.
package fingerprint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Of returns the hex SHA-256 of the canonical JSON encoding of v. v is first
// encoded with encoding/json (so struct tags and omitempty apply), then
// decoded into generic values and re-encoded with sorted keys.
func Of(v any) (string, error) {
	b, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Canonical returns the canonical JSON of v.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	// encoding/json sorts map keys and writes no white space; json.Number
	// keeps numbers exactly as written.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// AppendString appends s as a string of the canonical JSON Canonical
// writes: encoding/json's escaping without HTML escaping ('"', '\\' and
// control characters escaped, U+2028 and U+2029 as \u2028 and \u2029),
// each byte of invalid UTF-8 as the character U+FFFD itself (Canonical's
// first encoding turns it into the escape \ufffd, which its decoding reads
// as that character). With it a caller that knows its value's shape
// writes Canonical's bytes without the round trip through generic values.
func AppendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = utf8.AppendRune(b, utf8.RuneError)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
