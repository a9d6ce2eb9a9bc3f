package recap

import (
	"cmp"
	"slices"
)

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
