package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/transcript"
)

// History is a source conversation the host can seek in: its events by
// index, oldest first. Events(ctx, from, n) must cost O(n), not O(from)
// (an offset-indexed transcript), so that a page costs the same at the
// start and at the end of a long conversation. Implementations must be
// safe for concurrent use; the events returned are not modified.
type History interface {
	// Len returns the number of events.
	Len(ctx context.Context) (int64, error)
	// Events returns the events from index from on, at most n of them
	// (fewer at the end, none at or past Len).
	Events(ctx context.Context, from int64, n int) ([]transcript.Event, error)
}

// direction is the order read_source_history walks the conversation in.
type direction string

const (
	// oldestFirst walks from the first message to the last (the default).
	oldestFirst direction = "oldest-first"
	// newestFirst walks from the last message back to the first.
	newestFirst direction = "newest-first"
)

// Page budgets, in characters (runes) of the page's text.
const (
	defaultPageChars = 8000
	minPageChars     = 500
	maxPageChars     = 32000
	// maxMessageBytes bounds the raw text read of one message; the rest of
	// a longer message is counted, not shown.
	maxMessageBytes = 4 << 20
)

// historyArgs are the arguments of read_source_history.
type historyArgs struct {
	// Cursor continues a walk where an earlier page ended; empty starts at
	// the beginning (oldestFirst) or the end (newestFirst).
	Cursor string `json:"cursor,omitempty"`
	// Direction defaults to oldestFirst.
	Direction direction `json:"direction,omitempty"`
	// MaxChars bounds the page's text (defaultPageChars; clamped to
	// minPageChars..MaxPageChars).
	MaxChars int `json:"maxChars,omitempty"`
	// ReportTurns asks for the report-only turns too: the prompt that asked
	// the source for its handoff report, and its answer. They are not
	// conversation (the report reaches the target on its own), so a walk
	// leaves them out by default.
	ReportTurns bool `json:"reportTurns,omitempty"`
}

// entry is a piece of one message of the source conversation: bytes
// From..To of the message's text once redacted and stripped of markers
// (Size bytes in all).
type entry struct {
	Speaker string `json:"speaker"` // "user" or "agent"
	// Message is the index of the message's first event: it names the
	// message across pages.
	Message int64  `json:"message"`
	From    int    `json:"from"`
	To      int    `json:"to"`
	Size    int    `json:"size"`
	Text    string `json:"text"`
	// ReportTurn marks a message of a report-only turn
	// (historyArgs.ReportTurns).
	ReportTurn bool `json:"reportTurn,omitempty"`
}

// page is one page of read_source_history. Its entries are in the
// conversation's order whatever the direction; a newestFirst walk returns
// older pages one after another.
type page struct {
	Direction direction `json:"direction"`
	Entries   []entry   `json:"entries"`
	// Cursor continues the walk in Direction; empty when the walk has
	// reached the start (newestFirst) or the end (oldestFirst).
	Cursor string `json:"cursor,omitempty"`
	// Events is the number of events of the source conversation.
	Events int64 `json:"events"`
	// Text is the page as the agent reads it, at most the page budget.
	Text string `json:"-"`
}

// check validates the arguments that do not depend on the conversation,
// and returns where the cursor points (the start without one).
func (args historyArgs) check() (pos, error) {
	if d := args.Direction; d != "" && d != oldestFirst && d != newestFirst {
		return pos{}, baton.Errorf(errBadArguments, "direction %.40q is neither %q nor %q", d, oldestFirst, newestFirst)
	}
	if args.Cursor == "" {
		return pos{}, nil
	}
	return parseCursor(args.Cursor)
}

// pos is a place between two bytes of the conversation: byte off of the
// text of the message whose first event is ev. ev == Len is the end.
type pos struct {
	ev  int64
	off int
}

const cursorPrefix = "h1."

func (p pos) cursor() string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(p.ev, 10)+"."+strconv.Itoa(p.off)))
}

func parseCursor(s string) (pos, error) {
	bad := baton.Errorf(errBadArguments, "cursor %.40q was not made by this server", s)
	rest, ok := strings.CutPrefix(s, cursorPrefix)
	if !ok {
		return pos{}, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return pos{}, bad
	}
	e, o, ok := strings.Cut(string(b), ".")
	ev, err1 := strconv.ParseInt(e, 10, 64)
	off, err2 := strconv.Atoi(o)
	if !ok || err1 != nil || err2 != nil || ev < 0 || off < 0 {
		return pos{}, bad
	}
	return pos{ev, off}, nil
}

// readHistory returns one page of h, redacted and stripped of markers by
// clean (the Secrets and Markers of Config.Limits and the built-in token
// shapes), as the conversation replay of package recap does. Errors:
// errBadArguments (a cursor this server did not make, or one past the
// conversation, an unknown direction), and h's errors.
func readHistory(ctx context.Context, h History, clean cleaner, args historyArgs) (page, error) {
	at, err := args.check()
	if err != nil {
		return page{}, err
	}
	dir := cmp.Or(args.Direction, oldestFirst)
	budget := min(max(cmp.Or(args.MaxChars, defaultPageChars), minPageChars), maxPageChars)
	n, err := h.Len(ctx)
	if err != nil {
		return page{}, err
	}
	w := &walker{ctx: ctx, h: h, n: n, clean: clean, reportTurns: args.ReportTurns}
	switch {
	case at.ev > n:
		return page{}, baton.Errorf(errBadArguments, "the cursor points past the conversation")
	case args.Cursor == "" && dir == newestFirst:
		at = pos{ev: n}
	}
	p := page{Direction: dir, Events: n, Entries: []entry{}}
	// The text budget: the page's own lines take at most pageOverhead.
	next, more, err := w.walk(at, budget-pageOverhead, dir == newestFirst, &p)
	if err != nil {
		return page{}, err
	}
	if more {
		p.Cursor = next.cursor()
	}
	p.Text = render(p)
	return p, nil
}

// pageOverhead bounds the page's header and footer, in runes.
const pageOverhead = 260

// labelMax bounds an entry's label line, newlines included.
const labelMax = 116

func render(p page) string {
	var b strings.Builder
	order, what := "oldest first", "newer"
	if p.Direction == newestFirst {
		order, what = "newest first", "older"
	}
	fmt.Fprintf(&b, "Source conversation (%d events), read %s; redacted; this page in order:\n\n", p.Events, order)
	for _, e := range p.Entries {
		b.WriteString(label(e))
		b.WriteString(e.Text)
		b.WriteString("\n\n")
	}
	switch {
	case p.Cursor != "":
		fmt.Fprintf(&b, "More: call read_source_history with cursor %q and direction %q for %s messages.\n", p.Cursor, p.Direction, what)
	case p.Direction == newestFirst:
		b.WriteString("This is the start of the conversation.\n")
	default:
		b.WriteString("This is the end of the conversation.\n")
	}
	return b.String()
}

func label(e entry) string {
	s := "[" + e.Speaker + ", message " + strconv.FormatInt(e.Message, 10)
	if e.From > 0 {
		s += ", continued from byte " + strconv.Itoa(e.From)
	}
	if e.ReportTurn {
		s += ", report-only turn"
	}
	if e.To < e.Size {
		s += ", continues"
	}
	return s + "]\n"
}
