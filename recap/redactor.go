package recap

import "math"

// NewRedactor returns a Redactor with lim's Secrets and Markers; the other
// limits are ignored.
func NewRedactor(lim Limits) *Redactor { return newRedactor(lim.Secrets, lim.Markers) }

// Clean appends text to dst as a replayed message would carry it: secrets
// redacted, markers stripped, redacted again (a removed marker can join
// the halves of a secret), leading and trailing white space trimmed, and
// invalid UTF-8 replaced by U+FFFD. It returns dst unchanged when nothing
// is left. Its cost is linear in len(text).
func (r *Redactor) Clean(dst []byte, text string) []byte {
	body, _, _ := r.run(text, math.MaxInt)
	return append(dst, body...)
}
