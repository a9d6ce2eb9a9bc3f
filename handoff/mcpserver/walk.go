package mcpserver

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

// batch is how many events a reader asks its History for at once.
const batch = 256

// at returns event i (0 <= i < n) through a one-batch cache. back loads
// the batch that ends at i, for backward scans.
func (w *walker) at(i int64, back bool) (transcript.Event, error) {
	if i >= w.from && i < w.from+int64(len(w.buf)) {
		return w.buf[i-w.from], nil
	}
	from := i
	if back {
		from = max(0, i-batch+1)
	}
	evs, err := w.h.Events(w.ctx, from, batch)
	if err != nil {
		return transcript.Event{}, err
	}
	if i-from >= int64(len(evs)) {
		return transcript.Event{}, baton.Errorf(baton.ErrInternal, "history: event %d missing (Len %d)", i, w.n)
	}
	w.buf, w.from = evs, from
	return evs[i-from], nil
}

// starter reports whether ev opens a message or continues one of its
// speaker: the replay's rule for a chunk that is kept and counts. An event
// of a report-only turn is one only when the walk asked for those turns.
func (w *walker) starter(ev transcript.Event) bool {
	return ev.Kind == transcript.Message && (ev.Speaker == transcript.User || ev.Speaker == transcript.Agent) &&
		(w.reportTurns || !reportTurn(ev)) && strings.TrimSpace(ev.Text) != "" && !recap.IsHeartbeat(ev.Text)
}

func reportTurn(ev transcript.Event) bool { return ev.Turn == transcript.ReportOnly }

// walker pages through a conversation of n events. A message never runs
// across the border of a report-only turn: the replay's rule, so that a
// page's messages are the briefing's.
type walker struct {
	ctx         context.Context
	h           History
	n           int64
	buf         []transcript.Event // the cached batch, events from..
	from        int64
	clean       cleaner
	raw         []byte
	reportTurns bool // the walk shows report-only turns too
}

// message is one message of the conversation, cleaned.
type message struct {
	speaker transcript.Speaker
	report  bool // it belongs to a report-only turn
	text    []byte
	next    int64 // the first event after it: the next message's start, or Len
}

// firstFrom returns the first starter at or after i, or n.
func (w *walker) firstFrom(i int64) (int64, error) {
	for ; i < w.n; i++ {
		ev, err := w.at(i, false)
		if err != nil {
			return 0, err
		}
		if w.starter(ev) {
			return i, nil
		}
	}
	return w.n, nil
}

// read builds the message starting at the starter s, joining its chunks
// as the replay does: blank chunks of its speaker are kept, heartbeats and
// other speakers' blank chunks dropped, and chunks either side of a tool
// call joined by a line break when neither side has white space there. It
// ends before the next starter of another speaker.
func (w *walker) read(s int64) (message, error) {
	ev, err := w.at(s, false)
	if err != nil {
		return message{}, err
	}
	m := message{speaker: ev.Speaker, report: reportTurn(ev), next: w.n}
	raw := append(w.raw[:0], ev.Text...)
	unread, gap := 0, false
	add := func(t string) { // up to maxMessageBytes; the rest is counted
		k := min(len(t), max(0, maxMessageBytes-len(raw)))
		raw = append(raw, t[:k]...)
		unread += len(t) - k
	}
	for j := s + 1; j < w.n; j++ {
		ev, err := w.at(j, false)
		if err != nil {
			return message{}, err
		}
		switch {
		case reportTurn(ev) != m.report:
			// The border of a report-only turn ends the message.
			if m.next, err = w.firstFrom(j); err != nil {
				return message{}, err
			}
			j = w.n
		case ev.Kind == transcript.ToolCall:
			gap = true
		case ev.Kind != transcript.Message || (ev.Speaker != transcript.User && ev.Speaker != transcript.Agent):
		case ev.Speaker != m.speaker:
			if w.starter(ev) {
				m.next = j
				j = w.n // end of the message
			}
		case strings.TrimSpace(ev.Text) == "":
			add(ev.Text)
		case recap.IsHeartbeat(ev.Text):
		default:
			if gap && len(raw) > 0 && !isSpace(raw[len(raw)-1]) && !isSpace(ev.Text[0]) {
				add("\n")
			}
			gap = false
			add(ev.Text)
		}
	}
	w.raw = raw
	m.text = w.clean(nil, string(raw))
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
		ev, err := w.at(i, true)
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

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// minText is the least text worth starting an entry for.
const minText = 32

// walk fills p from at on, oldest first, or with what comes before at,
// newest first (back; entries end up in the conversation's order), within
// room runes. It returns where the page ended and whether anything is
// left after it.
func (w *walker) walk(at pos, room int, back bool, p *page) (pos, bool, error) {
	e, off := at.ev, at.off
	var ents []entry
	defer func() {
		if back {
			slices.Reverse(ents)
		}
		p.Entries = append(p.Entries, ents...)
	}()
	var m message
	loaded := false
	for {
		var err error
		switch {
		case off == 0 && !back:
			if e, err = w.firstFrom(e); err != nil {
				return pos{}, false, err
			}
		case off == 0:
			s, err := w.prevStart(e)
			if err != nil || s < 0 {
				return pos{e, 0}, false, err
			}
			if m, err = w.read(s); err != nil {
				return pos{}, false, err
			}
			if m.next != e {
				return pos{}, false, errNotAtMessage
			}
			e, off, loaded = s, len(m.text), true
			if off == 0 {
				continue
			}
		case loaded:
		case e >= w.n && back:
			return pos{}, false, errNotInConversation
		case e < w.n:
			ev, err := w.at(e, false)
			if err != nil {
				return pos{}, false, err
			}
			if !w.starter(ev) {
				return pos{}, false, errNotAtMessage
			}
		}
		if e >= w.n { // forward, at the end
			return pos{e, 0}, false, nil
		}
		if !loaded {
			if m, err = w.read(e); err != nil {
				return pos{}, false, err
			}
		}
		if off > len(m.text) || off < len(m.text) && !utf8.RuneStart(m.text[off]) {
			return pos{}, false, errNotInConversation
		}
		if !back && off == len(m.text) { // nothing (more) to show of it
			e, off, loaded = m.next, 0, false
			continue
		}
		if room-labelMax-2 < minText {
			return pos{e, off}, true, nil
		}
		en := entry{Speaker: strings.ToLower(m.speaker.String()), Message: e, From: off, To: off, Size: len(m.text), ReportTurn: m.report}
		if back {
			en.From = cut(m.text, off, room-labelMax-2, true)
		} else {
			en.To = cut(m.text, off, room-labelMax-2, false)
		}
		en.Text = string(m.text[en.From:en.To])
		room -= utf8.RuneCountInString(label(en)) + utf8.RuneCountInString(en.Text) + 2
		ents = append(ents, en)
		switch {
		case back && en.From > 0:
			return pos{e, en.From}, true, nil
		case !back && en.To < len(m.text):
			return pos{e, en.To}, true, nil
		case !back:
			e = m.next
		}
		off, loaded = 0, false
	}
}

// Errors of a cursor that does not fit the conversation.
var (
	errNotAtMessage      = baton.Errorf(errBadArguments, "the cursor does not point at a message")
	errNotInConversation = baton.Errorf(errBadArguments, "the cursor does not fit the conversation")
)

// cut returns the other end of the longest piece of t from off with at
// most n runes, read forward or, back, backward. The piece never ends
// inside a "[REDACTED]", unless that would leave it empty.
func cut(t []byte, off, n int, back bool) int {
	i := off
	for c := 0; c < n && (back && i > 0 || !back && i < len(t)); c++ {
		if back {
			_, sz := utf8.DecodeLastRune(t[:i])
			i -= sz
		} else {
			_, sz := utf8.DecodeRune(t[i:])
			i += sz
		}
	}
	switch j := insideMark(t, i); {
	case j < 0:
	case !back && j > off:
		return j
	case back && j+len(mark) < off:
		return j + len(mark)
	}
	return i
}

var mark = []byte(baton.Redacted)

// insideMark returns the start of a "[REDACTED]" that the cut i falls
// strictly inside, or -1.
func insideMark(t []byte, i int) int {
	lo := max(0, i-len(mark)+1)
	if j := bytes.Index(t[lo:min(len(t), i+len(mark)-1)], mark); j >= 0 {
		return lo + j
	}
	return -1
}
