package recap

import "math"

// Redactor applies the text rules of the builders to text a caller shows
// on its own terms, for example a page of a conversation served to an
// agent: the secrets of its Limits and the built-in token shapes are
// redacted, its markers stripped, exactly as in a replayed message, but
// nothing is clipped. A Redactor reuses its buffers between calls; it is
// not safe for concurrent use (build one per goroutine).
type Redactor struct{ r *redactor }

// NewRedactor returns a Redactor with lim's Secrets and Markers; the other
// limits are ignored.
func NewRedactor(lim Limits) *Redactor { return &Redactor{r: newRedactor(lim.Secrets, lim.Markers)} }

// Clean appends text to dst as a replayed message would carry it: secrets
// redacted, markers stripped, redacted again (a removed marker can join
// the halves of a secret), leading and trailing white space trimmed, and
// invalid UTF-8 replaced by U+FFFD. It returns dst unchanged when nothing
// is left. Its cost is linear in len(text).
func (r *Redactor) Clean(dst []byte, text string) []byte {
	rr := r.r
	rr.th.reset(math.MaxInt, rr.lookahead, false)
	rr.th.add(text)
	body, _, _ := rr.clip(rr.out[:0], &rr.th, math.MaxInt)
	rr.out = body[:0]
	return append(dst, body...)
}

// IsHeartbeat reports whether every non-blank line of text is a known
// keep-alive line ("[heartbeat]", "keep-alive", "Still working… (5m)"):
// the replay drops such chunks.
func IsHeartbeat(text string) bool { return isHeartbeat(text) }

// IsBlank reports whether text is empty or white space only: a blank chunk
// never starts a replayed message.
func IsBlank(text string) bool { return isBlank(text) }
