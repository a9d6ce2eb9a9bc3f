package recap

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batonhq/baton"
)

// head accumulates the beginning of one text arriving in pieces: the first
// limit runes plus extra bytes of lookahead, never more. Whatever comes after
// is only looked at to learn whether the text went on (overflow), so a huge
// message costs O(limit) memory however long it is.
type head struct {
	buf      []byte
	runes    int // runes in buf, up to limit
	cut      int // byte offset of the limit-th rune's end, -1 until reached
	limit    int
	extra    int
	overflow bool // a non-space byte arrived after buf was full
	// part holds an incomplete UTF-8 sequence that ended the last piece:
	// engines stream chunks cut anywhere, and the next piece may complete
	// it. It joins the text when the next piece comes, or as invalid bytes
	// when the text is read (done).
	part []byte
}

func (h *head) reset(limit, extra int) {
	*h = head{buf: h.buf[:0], cut: -1, limit: limit, extra: extra, part: h.part[:0]}
}

// incompleteTail returns how many bytes at the end of s begin a UTF-8
// sequence that s does not complete (0 when none).
func incompleteTail(s string) int {
	for k := 1; k < utf8.UTFMax && k <= len(s); k++ {
		if c := s[len(s)-k]; utf8.RuneStart(c) {
			if c >= utf8.RuneSelf && !utf8.FullRuneInString(s[len(s)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

// done joins a held incomplete sequence to the text as invalid bytes: no
// piece follows. Call it before reading buf.
func (h *head) done() {
	if len(h.part) > 0 {
		p := string(h.part)
		h.part = h.part[:0]
		h.addWhole(p)
	}
}

// add appends the next piece of the text. Leading white space of the text is
// dropped, so buf never starts with a blank line.
func (h *head) add(text string) {
	if len(h.part) > 0 {
		// Complete the held sequence with the continuation bytes that
		// start text (no more than a sequence can hold), then go on with
		// the rest: a few bytes joined, never the whole text, so memory
		// stays bounded by the budget however the stream is cut. Bytes
		// past a completed rune are invalid whichever piece carries them.
		k := 0
		for k < len(text) && len(h.part)+k < utf8.UTFMax && !utf8.RuneStart(text[k]) {
			k++
		}
		h.part = append(h.part, text[:k]...)
		if k == len(text) && !utf8.FullRune(h.part) {
			return // still incomplete: wait for more
		}
		h.addWhole(string(h.part))
		h.part = h.part[:0]
		text = text[k:]
	}
	if k := incompleteTail(text); k > 0 {
		h.part = append(h.part, text[len(text)-k:]...)
		text = text[:len(text)-k]
	}
	h.addWhole(text)
}

// addWhole appends text, in which no sequence is left for a later piece
// to complete.
func (h *head) addWhole(text string) {
	if len(h.buf) == 0 {
		text = strings.TrimLeftFunc(text, unicode.IsSpace)
	}
	if h.cut < 0 {
		i, n := runePrefix(text, h.limit-h.runes)
		h.buf = append(h.buf, text[:i]...)
		h.runes += n
		text = text[i:]
		if h.runes < h.limit {
			return
		}
		h.cut = len(h.buf)
	}
	if room := h.cut + h.extra - len(h.buf); room > 0 {
		k := min(room, len(text))
		h.buf = append(h.buf, text[:k]...)
		text = text[k:]
	}
	if !h.overflow && len(text) > 0 && !isBlank(text) {
		h.overflow = true
	}
}

// runePrefix returns the byte length and rune count of the first n runes of
// s (all of s when it has fewer). An invalid byte counts as one rune.
func runePrefix(s string, n int) (int, int) {
	if len(s) <= n { // at most n runes
		return len(s), utf8.RuneCountInString(s)
	}
	c := 0
	for i := range s {
		if c >= n {
			return i, c
		}
		c++
	}
	return len(s), c
}

func ascii8(s []byte) bool {
	_ = s[7]
	return (s[0]|s[1]|s[2]|s[3]|s[4]|s[5]|s[6]|s[7])&0x80 == 0
}

// run runs text through the pipeline of clip, in the scratch accumulator,
// and returns the result (valid until the next run), its rune count and
// whether it was cut.
func (r *redactor) run(text string, limit int) ([]byte, int, bool) {
	r.th.reset(limit, r.lookahead)
	r.th.add(text)
	body, runes, trunc := r.clip(r.out[:0], &r.th, limit)
	r.out = body
	return body, runes, trunc
}

// clip runs the text pipeline on h, the head of a text, and appends to dst
// the text to replay; it returns its rune count and whether it was cut (the
// caller then appends truncationMark, which the limit already has room for).
//
// The pipeline: redact, strip markers, trim, redact again, clip. Redacting
// first means a marker cannot eat part of a secret and leave the rest;
// redacting after means text joined by a removed marker is checked too. A cut
// text ends at least r.lookahead bytes before the end of what was read, so a
// secret that begins before the cut was seen whole and is replaced whole.
func (r *redactor) clip(dst []byte, h *head, limit int) ([]byte, int, bool) {
	h.done()
	s, complete := h.buf, !h.overflow
	if sp := r.find(s); len(sp) > 0 {
		r.tmp = replaceSpans(r.tmp[:0], s, sp)
		s = r.tmp
	}
	stripped := r.strip(s)
	changed := len(stripped) != len(s) || len(r.spans) > 0
	s = bytes.TrimLeftFunc(stripped, unicode.IsSpace)
	end := runeFloor(s, len(s)-r.lookahead)
	if complete {
		s = bytes.TrimRightFunc(s, unicode.IsSpace)
		end = len(s)
	}
	// Redact again only when the text changed: a removed marker or a
	// baton.Redacted can bring together what the first pass saw apart.
	sp := r.spans[:0]
	if changed {
		sp = r.find(s)
	}
	out, n, all := emit(dst, s, sp, end, limit)
	if complete && all {
		return out, n, false
	}
	out, n, _ = emit(dst, s, sp, end, limit-markRunes)
	kept := bytes.TrimRightFunc(out[len(dst):], unicode.IsSpace)
	n -= utf8.RuneCount(out[len(dst)+len(kept):])
	return out[:len(dst)+len(kept)], n, true
}

// emit appends s[:end] to dst with every span replaced by baton.Redacted and every
// invalid byte by U+FFFD, stopping before budget runes would be exceeded; a
// baton.Redacted that does not fit is left out whole. It returns the runes appended
// and whether all of s was consumed.
func emit(dst, s []byte, sp []span, end, budget int) ([]byte, int, bool) {
	used, i := 0, 0
	for i < end {
		if len(sp) > 0 && sp[0].start <= i {
			if budget-used < len(baton.Redacted) {
				return dst, used, false
			}
			dst = append(dst, baton.Redacted...)
			used += len(baton.Redacted)
			i = max(i, sp[0].end)
			sp = sp[1:]
			continue
		}
		stop := end
		if len(sp) > 0 {
			stop = min(stop, sp[0].start)
		}
		for i < stop {
			if used >= budget {
				return dst, used, false
			}
			if s[i] < utf8.RuneSelf {
				j, lim := i+1, stop
				if left := budget - used; left < stop-i {
					lim = i + left
				}
				for j+8 <= lim && ascii8(s[j:j+8]) {
					j += 8
				}
				for j < lim && s[j] < utf8.RuneSelf {
					j++
				}
				dst = append(dst, s[i:j]...)
				used += j - i
				i = j
				continue
			}
			c, n := utf8.DecodeRune(s[i:])
			if i+n > stop && stop < end {
				c, n = utf8.RuneError, stop-i // a broken rune runs into a span
			}
			dst = utf8.AppendRune(dst, c)
			used++
			i += n
		}
	}
	return dst, used, i >= len(s)
}

// runeFloor moves i back to the start of the rune it falls in (at most
// utf8.UTFMax-1 bytes: an invalid sequence counts byte by byte anyway).
func runeFloor(s []byte, i int) int {
	if i <= 0 {
		return 0
	}
	for k := 1; k < utf8.UTFMax && i > 0 && i < len(s) && !utf8.RuneStart(s[i]); k++ {
		i--
	}
	return i
}

// isBlank reports whether s is empty or white space only: a blank chunk
// never starts a replayed message (strings.TrimSpace(s) == "").
func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
