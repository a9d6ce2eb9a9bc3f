package recap

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/transcript"
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

// section is one "## " section of a handoff prompt.
type section struct {
	heading string
	squeeze int // when sections must be omitted, they go in increasing order
	budget  int // for the content, heading excluded
	floor   int // the least content worth keeping; below it, omitted
	render  func(budget int) string
	content string
}

// fitSections makes the contents of secs, each already rendered within its
// own budget, fit avail runes together. The sections share avail by water
// level: a section under the level keeps its content, larger ones are
// rendered again within the level. While the level is below the floor of a
// section it would clip, the first such section in squeeze order is omitted,
// which frees room for the others.
func fitSections(secs []*section, avail int) {
	omittedCost := runes(omittedSection)
	live := slices.SortedFunc(slices.Values(secs), func(a, b *section) int { return cmp.Compare(a.squeeze, b.squeeze) })
	sizes := make([]int, len(live))
	for i, s := range live {
		sizes[i] = runes(s.content)
	}
	room := avail
	for {
		caps := waterFill(sizes, room)
		victim := -1
		for i, s := range live {
			if caps[i] < sizes[i] && caps[i] < s.floor && sizes[i] > omittedCost {
				victim = i
				break
			}
		}
		if victim < 0 {
			for i, s := range live {
				if caps[i] < sizes[i] {
					s.content = s.render(caps[i])
				}
			}
			return
		}
		live[victim].content = omittedSection
		room -= omittedCost
		live = slices.Delete(live, victim, victim+1)
		sizes = slices.Delete(sizes, victim, victim+1)
	}
}
