package recap

import "math"

// Cleaner returns a function that appends text to dst as a replayed message
// would carry it: lim's Secrets and the built-in token shapes redacted, its
// Markers stripped, redacted again (a removed marker can join the halves of
// a secret), leading and trailing white space trimmed, and invalid UTF-8
// replaced by U+FFFD; nothing is clipped (lim's other limits are ignored).
// It returns dst unchanged when nothing is left; its cost is linear in
// len(text). A caller that shows recorded text on its own terms (a page of
// a conversation served to an agent) cleans it so. The function reuses
// scratch buffers: it is not safe for concurrent use (build one per
// goroutine).
func Cleaner(lim Limits) func(dst []byte, text string) []byte {
	r := newRedactor(lim.Secrets, lim.Markers)
	return func(dst []byte, text string) []byte {
		body, _, _ := r.run(text, math.MaxInt)
		return append(dst, body...)
	}
}
