package recap

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// block is one item of a handoff section: head lines, then a body quoted
// under them, or a line standing for a blank body.
type block struct {
	head string // "\n"-terminated, already through the pipeline; may be empty
	none string // line standing for a blank body
	body string // raw text, run through the pipeline when rendered
	pfx  string // body line prefix
}

// minBody is what a listed body is given at least before later items are
// left out of a section.
const minBody = 80

// list renders blocks within budget runes. Every item keeps its head; the
// bodies share what is left by water-filling: a body smaller than the fair
// share keeps its size, larger ones are clipped to the same share. When even
// minBody-sized bodies do not fit, the last items are left out and counted
// ("...2 more instructions omitted..."). Only the kept part of each body is read, so
// the work is O(budget) per item, plus one count of each body's runes.
func (r *redactor) list(blocks []block, budget int, noun string) string {
	n := len(blocks)
	fixed, est := make([]int, n), make([]int, n)
	for i, b := range blocks {
		fixed[i] = runes(b.head)
		// Whether anything is left of the body does not depend on how much
		// of it is kept: a short run of the pipeline tells.
		if len(r.appendText(nil, b.body, b.pfx, minBody, "")) == 0 {
			fixed[i] += runes(b.none)
			continue
		}
		lines := strings.Count(b.body, "\n") + 1
		est[i] = max(runes(b.body)+1+runes(b.pfx)*lines, markRunes+1+runes(b.pfx))
	}
	k, acc := 0, 0
	for i := range n {
		acc += fixed[i] + min(est[i], minBody)
		if acc > budget {
			break
		}
		if i+1 == n || acc+runes(omitted(n-i-1, "more", noun)) <= budget {
			k = i + 1
		}
	}
	note := ""
	if k < n {
		note = omitted(n-k, "more", noun)
	}
	room := budget - runes(note)
	for i := range k {
		room -= fixed[i]
	}
	caps := waterFill(est[:k], room)

	var dst []byte
	for i, b := range blocks[:k] {
		dst = append(dst, b.head...)
		if est[i] == 0 {
			dst = append(dst, b.none...)
			continue
		}
		dst = r.appendText(dst, b.body, b.pfx, caps[i], "")
	}
	return string(append(dst, note...))
}

// waterFill returns caps with caps[i] <= est[i] and sum(caps) <= room: every
// estimate under the level is kept, every other is cut to the level, the
// highest that fits.
func waterFill(est []int, room int) []int {
	// When every estimate fits under its share, the sum fits: no level.
	sorted := slices.Sorted(slices.Values(est))
	level, rem := math.MaxInt, room
	for j, e := range sorted {
		if share := rem / (len(sorted) - j); e > share {
			level = share
			break
		}
		rem -= e
	}
	caps := make([]int, len(est))
	for i, e := range est {
		caps[i] = min(e, level)
	}
	return caps
}

// line runs a short field (a title, an id, a status) through the pipeline
// and renders it on one line of at most limit runes, or returns none when
// nothing is left of it.
func (r *redactor) line(s string, limit int, none string) string {
	body, _, trunc := r.run(s, limit)
	if len(body) == 0 && !trunc {
		return none
	}
	t := oneLine.Replace(string(body))
	if trunc {
		t += truncationMark
	}
	return t
}

// oneLine flattens a field onto one line.
var oneLine = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ")

func runes(s string) int { return utf8.RuneCountInString(s) }
