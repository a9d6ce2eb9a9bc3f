// Package ids mints identifiers from crypto/rand: a short prefix naming the
// kind and 16 random bytes in lowercase base32, so ids sort nowhere in
// particular, never collide in practice, and are safe in file names.
package ids

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

var enc = base32.StdEncoding.WithPadding(base32.NoPadding)

// New returns prefix + "_" + 26 random base32 characters.
func New(prefix string) string {
	return prefix + "_" + Random(16)
}

// Random returns n random bytes as lowercase base32.
func Random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("ids: crypto/rand failed: " + err.Error())
	}
	return strings.ToLower(enc.EncodeToString(b))
}
