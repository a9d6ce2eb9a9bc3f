package mcpserver

import (
	"bytes"
	"context"
	"strconv"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/recap"
)

// batch is how many events a reader asks its History for at once.
const batch = 256

// reader reads events by index through a one-batch cache.
type reader struct {
	ctx  context.Context
	h    History
	n    int64
	buf  []recap.Event
	from int64
}

// at returns event i (0 <= i < n). back loads the batch that ends at i,
// for backward scans.
func (r *reader) at(i int64, back bool) (recap.Event, error) {
	if i >= r.from && i < r.from+int64(len(r.buf)) {
		return r.buf[i-r.from], nil
	}
	from := i
	if back {
		from = max(0, i-batch+1)
	}
	evs, err := r.h.Events(r.ctx, from, batch)
	if err != nil {
		return recap.Event{}, err
	}
	if i-from >= int64(len(evs)) {
		return recap.Event{}, baton.Errorf(baton.ErrInternal, "history: event %d missing (Len %d)", i, r.n)
	}
	r.buf, r.from = evs, from
	return evs[i-from], nil
}

// starter reports whether ev opens a message or continues one of its
// speaker: the replay's rule for a chunk that is kept and counts.
func starter(ev recap.Event) bool {
	return ev.Kind == recap.Message && (ev.Speaker == recap.User || ev.Speaker == recap.Agent) &&
		!recap.IsBlank(ev.Text) && !recap.IsHeartbeat(ev.Text)
}

// walker pages through a conversation.
type walker struct {
	r   *reader
	red *recap.Redactor
	raw []byte
}

// message is one message of the conversation, cleaned.
type message struct {
	start   int64
	speaker recap.Speaker
	text    []byte
	next    int64 // the first event after it: the next message's start, or Len
}

// firstFrom returns the first starter at or after i, or n.
func (w *walker) firstFrom(i int64) (int64, error) {
	for ; i < w.r.n; i++ {
		ev, err := w.r.at(i, false)
		if err != nil {
			return 0, err
		}
		if starter(ev) {
			return i, nil
		}
	}
	return w.r.n, nil
}

// read builds the message starting at the starter s, joining its chunks
// as the replay does: blank chunks of its speaker are kept, heartbeats and
// other speakers' blank chunks dropped, and chunks either side of a tool
// call joined by a line break when neither side has white space there. It
// ends before the next starter of another speaker.
func (w *walker) read(s int64) (message, error) {
	ev, err := w.r.at(s, false)
	if err != nil {
		return message{}, err
	}
	m := message{start: s, speaker: ev.Speaker, next: w.r.n}
	raw := append(w.raw[:0], ev.Text...)
	unread, gap := 0, false
	add := func(t string) {
		if len(raw)+len(t) > MaxMessageBytes {
			k := max(0, MaxMessageBytes-len(raw))
			raw = append(raw, t[:k]...)
			unread += len(t) - k
			return
		}
		raw = append(raw, t...)
	}
	for j := s + 1; j < w.r.n; j++ {
		ev, err := w.r.at(j, false)
		if err != nil {
			return message{}, err
		}
		switch {
		case ev.Kind == recap.ToolCall:
			gap = true
		case ev.Kind != recap.Message || (ev.Speaker != recap.User && ev.Speaker != recap.Agent):
		case ev.Speaker != m.speaker:
			if starter(ev) {
				m.next = j
				j = w.r.n // end of the message
			}
		case recap.IsBlank(ev.Text):
			add(ev.Text)
		case recap.IsHeartbeat(ev.Text):
		default:
			if gap && len(raw) > 0 && !spaceEnd(raw) && !spaceStart(ev.Text) {
				add("\n")
			}
			gap = false
			add(ev.Text)
		}
	}
	w.raw = raw
	m.text = w.red.Clean(nil, string(raw))
	if unread > 0 {
		m.text = append(m.text, "\n[… "+strconv.Itoa(unread)+" more bytes of this message were not read]"...)
	}
	return m, nil
}

// prevStart returns the start of the message that ends just before the
// message boundary e, or -1 when no message comes before e.
func (w *walker) prevStart(e int64) (int64, error) {
	start := int64(-1)
	var sp recap.Speaker
	for i := e - 1; i >= 0; i-- {
		ev, err := w.r.at(i, true)
		if err != nil {
			return 0, err
		}
		if !starter(ev) {
			continue
		}
		if start >= 0 && ev.Speaker != sp {
			break
		}
		start, sp = i, ev.Speaker
	}
	return start, nil
}

func spaceEnd(b []byte) bool {
	c := b[len(b)-1]
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func spaceStart(s string) bool {
	c := s[0]
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

func speakerName(s recap.Speaker) string {
	if s == recap.User {
		return "user"
	}
	return "agent"
}

// minText is the least text worth starting an entry for.
const minText = 32

// forward fills p from at on, oldest first, within room runes. It returns
// where the page ended and whether anything is left after it.
func (w *walker) forward(at pos, room int, p *Page) (pos, bool, error) {
	e, err := w.firstFrom(at.ev)
	if err != nil {
		return pos{}, false, err
	}
	if e != at.ev && at.off != 0 {
		return pos{}, false, baton.Errorf(ErrBadArguments, "the cursor does not point at a message")
	}
	off := at.off
	for e < w.r.n {
		m, err := w.read(e)
		if err != nil {
			return pos{}, false, err
		}
		if off > len(m.text) || off < len(m.text) && !utf8.RuneStart(m.text[off]) {
			return pos{}, false, baton.Errorf(ErrBadArguments, "the cursor does not fit the conversation")
		}
		if off == len(m.text) { // nothing (more) to show of it
			e, off = m.next, 0
			continue
		}
		en := Entry{Speaker: speakerName(m.speaker), Message: e, From: off, Size: len(m.text)}
		avail := room - labelMax - 2
		if avail < minText {
			return pos{e, off}, true, nil
		}
		cut, runes := prefixRunes(m.text, off, avail)
		en.To, en.Text = cut, string(m.text[off:cut])
		room -= entryCost(en, runes)
		p.Entries = append(p.Entries, en)
		if cut < len(m.text) {
			return pos{e, cut}, true, nil
		}
		e, off = m.next, 0
	}
	return pos{e, 0}, false, nil
}

// backward fills p with what comes before at, newest first, within room
// runes; entries end up in the conversation's order.
func (w *walker) backward(at pos, room int, p *Page) (pos, bool, error) {
	e, off := at.ev, at.off
	var rev []Entry
	defer func() {
		for i := len(rev) - 1; i >= 0; i-- {
			p.Entries = append(p.Entries, rev[i])
		}
	}()
	var m message
	loaded := false
	for {
		if off == 0 {
			s, err := w.prevStart(e)
			if err != nil {
				return pos{}, false, err
			}
			if s < 0 {
				return pos{e, 0}, false, nil
			}
			if m, err = w.read(s); err != nil {
				return pos{}, false, err
			}
			if m.next != e {
				return pos{}, false, baton.Errorf(ErrBadArguments, "the cursor does not point at a message")
			}
			e, off, loaded = s, len(m.text), true
			if off == 0 {
				continue
			}
		}
		if !loaded {
			if e >= w.r.n {
				return pos{}, false, baton.Errorf(ErrBadArguments, "the cursor does not fit the conversation")
			}
			ev, err := w.r.at(e, false)
			if err != nil {
				return pos{}, false, err
			}
			if !starter(ev) {
				return pos{}, false, baton.Errorf(ErrBadArguments, "the cursor does not point at a message")
			}
			if m, err = w.read(e); err != nil {
				return pos{}, false, err
			}
			loaded = true
		}
		if off > len(m.text) || off < len(m.text) && !utf8.RuneStart(m.text[off]) {
			return pos{}, false, baton.Errorf(ErrBadArguments, "the cursor does not fit the conversation")
		}
		avail := room - labelMax - 2
		if avail < minText {
			return pos{e, off}, true, nil
		}
		en := Entry{Speaker: speakerName(m.speaker), Message: e, To: off, Size: len(m.text)}
		cut, runes := suffixRunes(m.text, off, avail)
		en.From, en.Text = cut, string(m.text[cut:off])
		room -= entryCost(en, runes)
		rev = append(rev, en)
		if cut > 0 {
			return pos{e, cut}, true, nil
		}
		off, loaded = 0, false
	}
}

// prefixRunes returns the end of the longest piece of t from off with at
// most n runes, and its rune count. The piece never ends inside a
// "[REDACTED]", unless that would leave it empty.
func prefixRunes(t []byte, off, n int) (int, int) {
	i, c := off, 0
	for i < len(t) && c < n {
		_, sz := utf8.DecodeRune(t[i:])
		i += sz
		c++
	}
	if i < len(t) {
		if j := insideMark(t, i); j > off {
			c -= utf8.RuneCount(t[j:i])
			i = j
		}
	}
	return i, c
}

// suffixRunes returns the start of the longest piece of t ending at end
// with at most n runes, and its rune count, never starting inside a
// "[REDACTED]" unless that would leave it empty.
func suffixRunes(t []byte, end, n int) (int, int) {
	i, c := end, 0
	for i > 0 && c < n {
		_, sz := utf8.DecodeLastRune(t[:i])
		i -= sz
		c++
	}
	if i > 0 {
		if j := insideMark(t, i); j >= 0 {
			k := j + len(recap.Redacted)
			if k < end {
				c -= utf8.RuneCount(t[i:k])
				i = k
			}
		}
	}
	return i, c
}

var mark = []byte(recap.Redacted)

// insideMark returns the start of a "[REDACTED]" that the cut i falls
// strictly inside, or -1.
func insideMark(t []byte, i int) int {
	lo := max(0, i-len(recap.Redacted)+1)
	for j := lo; j < i; j++ {
		if j+len(recap.Redacted) > i && j+len(recap.Redacted) <= len(t) && bytes.HasPrefix(t[j:], mark) {
			return j
		}
	}
	return -1
}
