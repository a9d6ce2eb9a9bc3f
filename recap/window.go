package recap

import "github.com/batonhq/baton/transcript"

// window keeps the newest replayable messages of a conversation, already
// redacted and clipped, in one byte arena: the replay's memory is bounded by
// the budget plus one message, not by the transcript.
//
// A message is evicted as soon as the newer ones alone exceed the budget:
// those newer messages will be replayed before it whatever comes next, so it
// can never be part of the replay. Eviction is therefore exact, and render
// can drop the rest with the same rule once the omission note's cost is
// known.
type window struct {
	budget int

	arena []byte // message bodies; arena[:lo] is dead
	lo    int
	recs  []record // recs[:head] are evicted
	head  int

	sum     int // rendered runes of live messages, blank lines between them included
	dropped int // messages evicted
	total   int // messages pushed
}

// record is one message of the window.
type record struct {
	speaker transcript.Speaker
	off, n  int // body bytes in the arena
	runes   int // runes of the body
	trunc   bool
	size    int // rendered runes, label included
}

// push appends the newest message. body is copied.
func (w *window) push(s transcript.Speaker, body []byte, runes int, trunc bool) {
	w.total++
	// Reclaim dead bytes when the arena would grow and at least half of it
	// is dead: the copying stays linear in what is pushed.
	if len(w.arena)+len(body) > cap(w.arena) && w.lo > 0 && 2*w.lo >= len(w.arena) {
		n := copy(w.arena, w.arena[w.lo:])
		w.arena = w.arena[:n]
		for i := w.head; i < len(w.recs); i++ {
			w.recs[i].off -= w.lo
		}
		w.lo = 0
	}
	if w.head > 0 && 2*w.head >= len(w.recs) {
		w.recs = w.recs[:copy(w.recs, w.recs[w.head:])]
		w.head = 0
	}
	off := len(w.arena)
	w.arena = append(w.arena, body...)
	rec := record{speaker: s, off: off, n: len(body), runes: runes, trunc: trunc,
		size: len(label(s)) + quotedCost(body, runes, trunc, quote)}
	if w.head < len(w.recs) {
		w.sum++ // the blank line before it
	}
	w.recs = append(w.recs, rec)
	w.sum += rec.size
	for len(w.recs)-w.head > 1 && w.sum-w.recs[w.head].size-1 > w.budget {
		w.sum -= w.recs[w.head].size + 1
		w.head++
		w.dropped++
		w.lo = w.recs[w.head].off
	}
}

// render appends the replay of the window within budget runes, which must
// be at most w.budget and at least minMaxChars: the omission note, then the
// messages oldest first separated by blank lines, the newest always there,
// clipped to what is left if it does not fit whole.
func (w *window) render(dst []byte, budget int) []byte {
	if w.total == 0 {
		return append(dst, nothingExchanged...)
	}
	recs, dropped, sum := w.recs[w.head:], w.dropped, w.sum
	for len(recs) > 1 && noteCost(dropped)+sum > budget {
		sum -= recs[0].size + 1
		recs = recs[1:]
		dropped++
	}
	if dropped > 0 {
		dst = append(dst, omitted(dropped, "earlier", "message")...)
		dst = append(dst, '\n')
	}
	for i, rec := range recs {
		if i > 0 {
			dst = append(dst, '\n')
		}
		body := w.arena[rec.off : rec.off+rec.n]
		if len(recs) == 1 && noteCost(dropped)+rec.size > budget {
			left := budget - noteCost(dropped) - len(label(rec.speaker))
			dst = appendMessage(dst, rec.speaker, fitQuoted(string(body), quote, left), true)
			continue
		}
		dst = appendMessage(dst, rec.speaker, body, rec.trunc)
	}
	return dst
}
