package recap

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batonhq/baton/transcript"

	"github.com/batonhq/baton"
)

// Quoting. Every recorded text (a message, the task, an instruction) is
// rendered as a quote, each line behind a prefix, so that nothing it contains
// can pass for the briefing's own structure: a line of the briefing that
// starts at column 0 always comes from this package.
const (
	quote     = "> "   // a replayed message, the task, the ending, the mission
	itemQuote = "  > " // the body of a list item
	verbatim  = ""     // the report, which is Markdown written for the reader
)

// quotedCost is the exact rune count appendQuoted renders for body, whose
// rune count is runes, followed by truncationMark when trunc. A non-empty
// line costs the prefix, the line and its newline; an empty line costs the
// prefix without its trailing blank, and the newline.
func quotedCost(body []byte, runes int, trunc bool, pfx string) int {
	lines, empty := 0, 0
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		lines++
		if len(line) == 0 {
			empty++
		}
	}
	if trunc {
		runes += markRunes
		if len(body) == 0 || body[len(body)-1] == '\n' {
			empty-- // the mark fills the last line
		}
	}
	full := utf8.RuneCountInString(pfx)
	bare := utf8.RuneCountInString(strings.TrimRight(pfx, " "))
	return runes + 1 + full*lines - (full-bare)*empty
}

// appendQuoted renders body (and the mark when trunc) line by line behind
// pfx. Its length in runes is quotedCost.
func appendQuoted[T ~string | ~[]byte](dst []byte, body T, trunc bool, pfx string) []byte {
	bare := strings.TrimRight(pfx, " ")
	start := 0
	for i := 0; i <= len(body); i++ {
		if i < len(body) && body[i] != '\n' {
			continue
		}
		last := i == len(body)
		line := body[start:i]
		if len(line) == 0 && !(last && trunc) {
			dst = append(dst, bare...)
		} else {
			dst = append(dst, pfx...)
			dst = append(dst, line...)
		}
		if last && trunc {
			dst = append(dst, truncationMark...)
		}
		dst = append(dst, '\n')
		start = i + 1
	}
	return dst
}

// fitQuoted returns the longest beginning of body whose quoted rendering,
// truncation mark included, costs at most budget runes. The cut falls on a
// rune boundary, never inside a baton.Redacted, and trailing space is dropped.
// Callers use it only when body does not fit whole, so the result is always
// marked as truncated.
func fitQuoted(body, pfx string, budget int) string {
	full := utf8.RuneCountInString(pfx)
	cost := markRunes + 1 + full // the mark, on a first line of its own
	cut := 0
	for cut < len(body) {
		c, n := utf8.DecodeRuneInString(body[cut:])
		if c == '\n' {
			cost += 1 + full
		} else {
			cost++
		}
		if cost > budget {
			break
		}
		cut += n
	}
	// Never cut a baton.Redacted in two: "[REDA" would look like text.
	// Occurrences cannot overlap, so only the last one that starts before
	// the cut can straddle it.
	if j := strings.LastIndex(body[:min(len(body), cut+len(baton.Redacted)-1)], baton.Redacted); j >= 0 && j+len(baton.Redacted) > cut {
		cut = j
	}
	return strings.TrimRightFunc(body[:cut], unicode.IsSpace)
}

// Labels of replayed messages, each on a line of its own.
func label(s transcript.Speaker) string {
	if s == transcript.User {
		return "User:\n"
	}
	return "Agent:\n"
}

func appendMessage[T ~string | ~[]byte](dst []byte, s transcript.Speaker, body T, trunc bool) []byte {
	return appendQuoted(append(dst, label(s)...), body, trunc, quote)
}

// omitted renders "...3 earlier messages omitted...", singular for one.
func omitted(n int, what, noun string) string {
	s := "..." + strconv.Itoa(n) + " " + what + " " + noun
	if n != 1 {
		s += "s"
	}
	return s + " omitted...\n"
}

// noteCost is what the omission note of a replay costs: the note and the
// blank line after it; nothing when no message was dropped.
func noteCost(dropped int) int {
	if dropped == 0 {
		return 0
	}
	return len(omitted(dropped, "earlier", "message")) + 1
}
