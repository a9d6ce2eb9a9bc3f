package mcpserver

import (
	"bytes"
	"context"
	"strconv"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

// batch is how many events a reader asks its History for at once.
const batch = 256

// reader reads events by index through a one-batch cache.
type reader struct {
	ctx  context.Context
	h    History
	n    int64
	buf  []transcript.Event
	from int64
}

// at returns event i (0 <= i < n). back loads the batch that ends at i,
// for backward scans.
func (r *reader) at(i int64, back bool) (transcript.Event, error) {
	if i >= r.from && i < r.from+int64(len(r.buf)) {
		return r.buf[i-r.from], nil
	}
	from := i
	if back {
		from = max(0, i-batch+1)
	}
	evs, err := r.h.Events(r.ctx, from, batch)
	if err != nil {
		return transcript.Event{}, err
	}
	if i-from >= int64(len(evs)) {
		return transcript.Event{}, baton.Errorf(baton.ErrInternal, "history: event %d missing (Len %d)", i, r.n)
	}
	r.buf, r.from = evs, from
	return evs[i-from], nil
}

// starter reports whether ev opens a message or continues one of its
// speaker: the replay's rule for a chunk that is kept and counts. An event
// of a report-only turn is one only when the walk asked for those turns.
func (w *walker) starter(ev transcript.Event) bool {
	return ev.Kind == transcript.Message && (ev.Speaker == transcript.User || ev.Speaker == transcript.Agent) &&
		(w.reportTurns || !reportTurn(ev)) && !recap.IsBlank(ev.Text) && !recap.IsHeartbeat(ev.Text)
}

func reportTurn(ev transcript.Event) bool { return ev.Turn == transcript.ReportOnly }

// walker pages through a conversation. A message never runs across the
// border of a report-only turn: the replay's rule, so that a page's
// messages are the briefing's.
type walker struct {
	r           *reader
	red         *recap.Redactor
	raw         []byte
	reportTurns bool // the walk shows report-only turns too
}

// message is one message of the conversation, cleaned.
type message struct {
	start   int64
	speaker transcript.Speaker
	report  bool // it belongs to a report-only turn
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
		if w.starter(ev) {
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
	m := message{start: s, speaker: ev.Speaker, report: reportTurn(ev), next: w.r.n}
	raw := append(w.raw[:0], ev.Text...)
	unread, gap := 0, false
	add := func(t string) {
		if len(raw)+len(t) > maxMessageBytes {
			k := max(0, maxMessageBytes-len(raw))
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
		case reportTurn(ev) != m.report:
			// The border of a report-only turn ends the message.
			if m.next, err = w.firstFrom(j); err != nil {
				return message{}, err
			}
			j = w.r.n
		case ev.Kind == transcript.ToolCall:
			gap = true
		case ev.Kind != transcript.Message || (ev.Speaker != transcript.User && ev.Speaker != transcript.Agent):
		case ev.Speaker != m.speaker:
			if w.starter(ev) {
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
	var sp transcript.Speaker
	var rep bool
	for i := e - 1; i >= 0; i-- {
		ev, err := w.r.at(i, true)
		if err != nil {
			return 0, err
		}
		if start >= 0 && reportTurn(ev) != rep {
			break // the border of a report-only turn
		}
		if !w.starter(ev) {
			continue
		}
		if start >= 0 && ev.Speaker != sp {
			break
		}
		start, sp, rep = i, ev.Speaker, reportTurn(ev)
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

func speakerName(s transcript.Speaker) string {
	if s == transcript.User {
		return "user"
	}
	return "agent"
}

// minText is the least text worth starting an entry for.
const minText = 32

// forward fills p from at on, oldest first, within room runes. It returns
// where the page ended and whether anything is left after it.
func (w *walker) forward(at pos, room int, p *page) (pos, bool, error) {
	e, err := w.firstFrom(at.ev)
	if err != nil {
		return pos{}, false, err
	}
	if e != at.ev && at.off != 0 {
		return pos{}, false, baton.Errorf(errBadArguments, "the cursor does not point at a message")
	}
	off := at.off
	for e < w.r.n {
		m, err := w.read(e)
		if err != nil {
			return pos{}, false, err
		}
		if off > len(m.text) || off < len(m.text) && !utf8.RuneStart(m.text[off]) {
			return pos{}, false, baton.Errorf(errBadArguments, "the cursor does not fit the conversation")
		}
		if off == len(m.text) { // nothing (more) to show of it
			e, off = m.next, 0
			continue
		}
		en := entry{Speaker: speakerName(m.speaker), Message: e, From: off, Size: len(m.text), ReportTurn: m.report}
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
func (w *walker) backward(at pos, room int, p *page) (pos, bool, error) {
	e, off := at.ev, at.off
	var rev []entry
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
				return pos{}, false, baton.Errorf(errBadArguments, "the cursor does not point at a message")
			}
			e, off, loaded = s, len(m.text), true
			if off == 0 {
				continue
			}
		}
		if !loaded {
			if e >= w.r.n {
				return pos{}, false, baton.Errorf(errBadArguments, "the cursor does not fit the conversation")
			}
			ev, err := w.r.at(e, false)
			if err != nil {
				return pos{}, false, err
			}
			if !w.starter(ev) {
				return pos{}, false, baton.Errorf(errBadArguments, "the cursor does not point at a message")
			}
			if m, err = w.read(e); err != nil {
				return pos{}, false, err
			}
			loaded = true
		}
		if off > len(m.text) || off < len(m.text) && !utf8.RuneStart(m.text[off]) {
			return pos{}, false, baton.Errorf(errBadArguments, "the cursor does not fit the conversation")
		}
		avail := room - labelMax - 2
		if avail < minText {
			return pos{e, off}, true, nil
		}
		en := entry{Speaker: speakerName(m.speaker), Message: e, To: off, Size: len(m.text), ReportTurn: m.report}
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
			k := j + len(baton.Redacted)
			if k < end {
				c -= utf8.RuneCount(t[i:k])
				i = k
			}
		}
	}
	return i, c
}

var mark = []byte(baton.Redacted)

// insideMark returns the start of a "[REDACTED]" that the cut i falls
// strictly inside, or -1.
func insideMark(t []byte, i int) int {
	lo := max(0, i-len(baton.Redacted)+1)
	for j := lo; j < i; j++ {
		if j+len(baton.Redacted) > i && j+len(baton.Redacted) <= len(t) && bytes.HasPrefix(t[j:], mark) {
			return j
		}
	}
	return -1
}
