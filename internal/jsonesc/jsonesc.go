// Package jsonesc writes Go strings as JSON string literals, byte for byte
// as encoding/json writes them, for code that encodes known shapes by hand
// and must produce exactly the bytes encoding/json would.
//
// # Basics
//
// AppendCanonical writes what an encoding/json Encoder with
// SetEscapeHTML(false) writes after a decode/encode round trip has
// replaced invalid UTF-8: quoted; '"' and '\\' escaped with a backslash;
// \b \f \n \r \t by name; other control characters as \u00XX; U+2028 and
// U+2029 as \u2028 and \u2029; each byte of invalid UTF-8 as the character
// U+FFFD.
//
// # Caveats
//
// Only strings: numbers, times and the rest of a record are the caller's.
// The tests of the packages that use it compare their output with
// encoding/json's on random values, so a change here that breaks the
// equivalence fails there too.
package jsonesc

import "unicode/utf8"

// AppendCanonical appends s as canonical JSON writes it: no HTML escaping,
// and invalid UTF-8 as the character U+FFFD.
func AppendCanonical(b []byte, s string) []byte {
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
