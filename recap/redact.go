package recap

import (
	"bytes"
	"cmp"
	"math"
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

// Byte classes of token bodies.
func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func upper(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func word(c byte) bool  { return alnum(c) || c == '_' } // sk- must not follow one
func dash(c byte) bool  { return word(c) || c == '-' }
func dot(c byte) bool   { return dash(c) || c == '.' }

// shapeFirst marks the bytes a built-in token shape starts with.
var shapeFirst = [256]bool{'g': true, 's': true, 'A': true, 'y': true, 'x': true}

// matchShape returns the end of the built-in token shape starting at s[i],
// or -1. Bodies are greedy: the whole run of token characters is redacted.
// Minimum body lengths keep ordinary words out (they are shorter than the
// real tokens, so a real token always matches). The prefixes are distinctive
// enough to match inside a word (a token glued to the text before it is
// still redacted), except sk-.
func matchShape(s []byte, i int) int {
	t := s[i:]
	switch t[0] {
	case 'g':
		switch {
		case hasPrefix(t, "github_pat_"):
			return run(s, i+11, word, 20)
		case hasPrefix(t, "glpat-"):
			return run(s, i+6, dash, 20)
		case len(t) >= 4 && t[1] == 'h' && t[3] == '_' && strings.IndexByte("opsur", t[2]) >= 0:
			return run(s, i+4, alnum, 20) // ghp_ gho_ ghs_ ghu_ ghr_
		}
	case 's':
		// sk-ant-, sk-proj- and plain sk-. The prefix is short enough to end
		// words ("task-", "disk-"), so it must start one.
		if hasPrefix(t, "sk-") && (i == 0 || !word(s[i-1])) {
			return run(s, i+3, dash, 20)
		}
	case 'A':
		if hasPrefix(t, "AKIA") || hasPrefix(t, "ASIA") {
			return run(s, i+4, upper, 16)
		}
		if hasPrefix(t, "AIza") {
			return run(s, i+4, dash, 30)
		}
	case 'y':
		if hasPrefix(t, "ya29.") {
			return run(s, i+5, dot, 20)
		}
	case 'x':
		if len(t) >= 5 && t[1] == 'o' && t[2] == 'x' && 'a' <= t[3] && t[3] <= 'z' && t[4] == '-' {
			return run(s, i+5, dash, 10) // xoxb-, xoxp-, xoxa-, ...
		}
	}
	return -1
}

// run returns the end of the run of class bytes starting at s[j] if it is at
// least minLen long, else -1.
func run(s []byte, j int, class func(byte) bool, minLen int) int {
	k := j
	for k < len(s) && class(s[k]) {
		k++
	}
	if k-j < minLen {
		return -1
	}
	return k
}

func hasPrefix(b []byte, p string) bool {
	return len(b) >= len(p) && string(b[:len(p)]) == p
}
