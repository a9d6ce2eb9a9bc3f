package recap

import (
	"bytes"
	"cmp"
	"regexp"
	"slices"
	"strings"

	"github.com/batonhq/baton"
)

// span is a byte range [start, end) of a text to redact.
type span struct{ start, end int }

// minLookahead is the least number of bytes read past a clip point, so that
// a secret or token shape beginning before the cut is seen whole.
const minLookahead = 256

// redactor applies the text rules of the builders: the secrets of its
// Limits and the built-in token shapes are redacted, its markers stripped.
// It holds the scratch buffers the text pipeline reuses, so that a replay
// allocates per call, not per chunk; it is not safe for concurrent use.
type redactor struct {
	markers   []marker
	lookahead int // bytes read past a clip point
	// byFirst holds the secrets (distinct, non-blank) starting with each
	// byte, longest first.
	byFirst [256][][]byte

	spans []span
	tmp   []byte // the text after the first redaction pass
	out   []byte // the pipeline's output
	th    head   // accumulator of appendText and line
}

func newRedactor(secrets []string, markers []*regexp.Regexp) *redactor {
	r := &redactor{lookahead: minLookahead}
	var all [][]byte
	for _, v := range secrets {
		// A value is redacted trimmed too: the text around it may have been
		// trimmed (a message never starts with a blank).
		for _, s := range []string{v, strings.TrimSpace(v)} {
			if strings.TrimSpace(s) != "" {
				all = append(all, []byte(s))
			}
		}
	}
	slices.SortFunc(all, func(a, b []byte) int { return cmp.Or(cmp.Compare(len(b), len(a)), bytes.Compare(a, b)) })
	for _, s := range slices.CompactFunc(all, bytes.Equal) {
		r.byFirst[s[0]] = append(r.byFirst[s[0]], s)
		r.lookahead = max(r.lookahead, len(s))
	}
	for _, re := range markers {
		if re != nil {
			r.markers = append(r.markers, newMarker(re))
		}
	}
	return r
}

// find returns the sorted, merged spans of s to redact: every occurrence of
// a configured secret and every built-in token shape, in one pass over s.
// Overlapping and touching spans are united, so that two secrets sharing
// bytes become one redaction and neither leaks a piece of the other. The
// result is reused by the next call.
func (r *redactor) find(s []byte) []span {
	sp := r.spans[:0]
	add := func(start, end int) {
		if n := len(sp); n > 0 && start <= sp[n-1].end {
			sp[n-1].end = max(sp[n-1].end, end)
			return
		}
		sp = append(sp, span{start, end})
	}
	for i, c := range s {
		if shapeFirst[c] {
			if end := matchShape(s, i); end > 0 {
				add(i, end)
			}
		}
		for _, sec := range r.byFirst[c] { // longest first: the first hit is the longest
			if bytes.HasPrefix(s[i:], sec) {
				add(i, i+len(sec))
				break
			}
		}
	}
	r.spans = sp
	return sp
}

// replaceSpans appends s to dst with every span replaced by baton.Redacted.
func replaceSpans(dst, s []byte, sp []span) []byte {
	i := 0
	for _, x := range sp {
		dst = append(dst, s[i:x.start]...)
		dst = append(dst, baton.Redacted...)
		i = x.end
	}
	return append(dst, s[i:]...)
}
