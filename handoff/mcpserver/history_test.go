package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

const (
	ghToken   = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	envSecret = "s3cr3t-staging-token-77"
)

func historyLimits() recap.Limits {
	return recap.Limits{
		Markers: []*regexp.Regexp{regexp.MustCompile(`\s*DONE\s*$`)},
		Secrets: []string{envSecret},
	}
}

// want is a message as a page must show it.
type want struct {
	speaker string
	text    string
}

// conversation builds a conversation of n messages, alternating speakers,
// streamed in chunks cut at random bytes (inside secrets and runes too),
// with tool calls, notes, lifecycle lines, heartbeats and the other
// speaker's blank chunks in between. It returns the events and the
// messages a reader must see, in order.
func conversation(n int, seed uint64) (mcpserver.MemHistory, []want) {
	rng := rand.New(rand.NewPCG(seed, 7))
	clean := recap.Cleaner(historyLimits())
	var evs mcpserver.MemHistory
	var msgs []want
	evs = append(evs, transcript.Event{Kind: transcript.Lifecycle, Text: "session started"})
	for i := range n {
		sp, other := transcript.User, transcript.Agent
		if i%2 == 1 {
			sp, other = other, sp
		}
		var text string
		switch i % 7 {
		case 0:
			text = fmt.Sprintf("Message %d: push with %s and stage with %s, then report.", i, ghToken, envSecret)
		case 1:
			text = strings.Repeat(fmt.Sprintf("line %d of a long answer, 日本語もある。\n", i), 40+rng.IntN(200))
		case 2:
			text = "DONE" // nothing left once the marker is stripped
		case 3:
			text = fmt.Sprintf("short %d\nDONE", i)
		default:
			text = fmt.Sprintf("message %d [REDACTED] is literal here; %s", i, strings.Repeat("word ", rng.IntN(300)))
		}
		for len(text) > 0 {
			k := min(len(text), 1+rng.IntN(64))
			evs = append(evs, transcript.Event{Speaker: sp, Kind: transcript.Message, Text: text[:k]})
			text = text[k:]
			switch rng.IntN(8) {
			case 0:
				evs = append(evs, transcript.Event{Speaker: sp, Kind: transcript.Message, Text: "[heartbeat]"})
			case 1:
				evs = append(evs, transcript.Event{Speaker: other, Kind: transcript.Message, Text: "  "})
			case 2:
				evs = append(evs, transcript.Event{Kind: transcript.Note, Text: "a note " + envSecret})
			}
		}
		if rng.IntN(3) == 0 {
			evs = append(evs, transcript.Event{Speaker: sp, Kind: transcript.ToolCall, Text: "run tests " + ghToken})
		}
	}
	// Rebuild the expected messages from the events' message chunks.
	var cur []byte
	var sp transcript.Speaker
	flush := func() {
		if cur != nil {
			if t := string(clean(nil, string(cur))); t != "" {
				msgs = append(msgs, want{speaker: map[transcript.Speaker]string{transcript.User: "user", transcript.Agent: "agent"}[sp], text: t})
			}
		}
		cur = nil
	}
	for _, ev := range evs {
		if ev.Kind == transcript.Message && strings.TrimSpace(ev.Text) == "" && ev.Speaker == sp && cur != nil {
			cur = append(cur, ev.Text...) // a blank chunk inside a message is kept
			continue
		}
		if ev.Kind != transcript.Message || strings.TrimSpace(ev.Text) == "" || recap.IsHeartbeat(ev.Text) {
			continue
		}
		if ev.Speaker != sp {
			flush()
			sp = ev.Speaker
		}
		cur = append(cur, ev.Text...)
	}
	flush()
	return evs, msgs
}

// walk reads every page in dir with budget and checks each page's bound.
func walk(t *testing.T, read func(args mcpserver.HistoryArgs) mcpserver.Page, dir mcpserver.Direction, budget int) []mcpserver.Page {
	t.Helper()
	var pages []mcpserver.Page
	cursor := ""
	for {
		p := read(mcpserver.HistoryArgs{Cursor: cursor, Direction: dir, MaxChars: budget})
		if n := utf8.RuneCountInString(p.Text); n > budget {
			t.Fatalf("page %d: %d characters, budget %d", len(pages), n, budget)
		}
		for _, s := range []string{ghToken, envSecret, ghToken[:16]} {
			if strings.Contains(p.Text, s) {
				t.Fatalf("page %d leaks %q", len(pages), s)
			}
		}
		pages = append(pages, p)
		if p.Cursor == "" {
			return pages
		}
		if len(pages) > 100000 {
			t.Fatal("the walk does not end")
		}
		cursor = p.Cursor
	}
}

// assemble checks that pages, in reading order, account for every byte of
// msgs exactly once, and each entry's text is in its page's text.
func assemble(t *testing.T, pages []mcpserver.Page, dir mcpserver.Direction, msgs []want) {
	t.Helper()
	var entries []mcpserver.Entry
	for i, p := range pages {
		if i > 0 && len(p.Entries) == 0 {
			t.Fatalf("page %d of %d is empty", i, len(pages))
		}
		for _, e := range p.Entries {
			if !strings.Contains(p.Text, e.Text) {
				t.Fatalf("entry %+v is not in its page's text", e)
			}
		}
		if dir == mcpserver.NewestFirst {
			entries = append(append([]mcpserver.Entry{}, p.Entries...), entries...)
		} else {
			entries = append(entries, p.Entries...)
		}
	}
	var got []want
	var cuts [][]int // per message, the offsets where pages split it
	var last *mcpserver.Entry
	for i := range entries {
		e := &entries[i]
		if last != nil && last.Message == e.Message {
			if e.From != last.To {
				t.Fatalf("message %d: entry from %d after one to %d", e.Message, e.From, last.To)
			}
			got[len(got)-1].text += e.Text
			cuts[len(cuts)-1] = append(cuts[len(cuts)-1], e.From)
		} else {
			if last != nil && last.To != last.Size {
				t.Fatalf("message %d ends at %d of %d", last.Message, last.To, last.Size)
			}
			if e.From != 0 {
				t.Fatalf("message %d starts at byte %d", e.Message, e.From)
			}
			got = append(got, want{speaker: e.Speaker, text: e.Text})
			cuts = append(cuts, nil)
		}
		last = e
	}
	if last != nil && last.To != last.Size {
		t.Fatalf("last message ends at %d of %d", last.To, last.Size)
	}
	if diff := cmp.Diff(msgs, got, cmp.AllowUnexported(want{})); diff != "" {
		t.Fatalf("messages read (-want +got):\n%s", diff)
	}
	for i, cs := range cuts {
		for _, c := range cs {
			text := got[i].text
			for j := max(0, c-len(baton.Redacted)+1); j < c; j++ {
				if strings.HasPrefix(text[j:], baton.Redacted) {
					t.Fatalf("message %d split at byte %d, inside a %s", i, c, baton.Redacted)
				}
			}
			if !utf8.RuneStart(text[c]) {
				t.Fatalf("message %d split at byte %d, inside a character", i, c)
			}
		}
	}
}

func TestReadHistoryWalksBothWays(t *testing.T) {
	evs, msgs := conversation(60, 1)
	if len(msgs) < 40 {
		t.Fatalf("transcript has %d messages", len(msgs))
	}
	ctx := context.Background()
	for _, budget := range []int{mcpserver.MinPageChars, 1200, mcpserver.DefaultPageChars, mcpserver.MaxPageChars} {
		for _, dir := range []mcpserver.Direction{mcpserver.OldestFirst, mcpserver.NewestFirst} {
			t.Run(fmt.Sprintf("%s/%d", dir, budget), func(t *testing.T) {
				pages := walk(t, func(a mcpserver.HistoryArgs) mcpserver.Page {
					p, err := mcpserver.ReadHistory(ctx, evs, historyLimits(), a)
					if err != nil {
						t.Fatal(err)
					}
					return p
				}, dir, budget)
				assemble(t, pages, dir, msgs)
			})
		}
	}
}

func TestReadHistoryJoinsChunksAsTheReplay(t *testing.T) {
	evs := mcpserver.MemHistory{
		{Speaker: transcript.User, Kind: transcript.Message, Text: "look at it"},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Let me look"},
		{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "read main.go"},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "at main.go. The key is ghp_0123456789"},
		{Speaker: transcript.User, Kind: transcript.Message, Text: " "}, // another speaker's blank chunk: ignored
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "abcdefghijABCDEF, done."},
		{Speaker: 0, Kind: transcript.Message, Text: "no speaker: never shown"},
	}
	p, err := mcpserver.ReadHistory(context.Background(), evs, recap.Limits{}, mcpserver.HistoryArgs{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range p.Entries {
		got = append(got, e.Speaker+": "+e.Text)
	}
	want := []string{"user: look at it", "agent: Let me look\nat main.go. The key is [REDACTED], done."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
}

func TestReadHistoryRefusesBadArguments(t *testing.T) {
	evs, _ := conversation(4, 2)
	p, err := mcpserver.ReadHistory(context.Background(), evs, recap.Limits{}, mcpserver.HistoryArgs{MaxChars: mcpserver.MinPageChars})
	if err != nil || p.Cursor == "" {
		t.Fatalf("first page: %v, cursor %q", err, p.Cursor)
	}
	for _, a := range []mcpserver.HistoryArgs{
		{Cursor: "nonsense"},
		{Cursor: "h1.!!!"},
		{Cursor: p.Cursor + "x"},
		{Cursor: "h1.OTk5OTk5LjA"}, // an event far past the end
		{Direction: "sideways"},
	} {
		if _, err := mcpserver.ReadHistory(context.Background(), evs, recap.Limits{}, a); !errors.Is(err, mcpserver.ErrBadArguments) {
			t.Errorf("ReadHistory(%+v) = %v, want ErrBadArguments", a, err)
		}
	}
}

func TestHistoryToolOverTransports(t *testing.T) {
	evs, msgs := conversation(30, 3)
	for _, kind := range transports {
		t.Run(kind, func(t *testing.T) {
			f := newFixture(t, fixtureOpts{limits: historyLimits(),
				history: func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
					return evs, nil
				}})
			acc := f.srv.GrantTarget(f.ws, "hof-1")
			cs := f.connect(t, kind, acc)
			if diff := cmp.Diff([]string{mcpserver.ToolFacts, mcpserver.ToolHistory}, toolNames(t, cs)); diff != "" {
				t.Fatalf("tools of a target turn (-want +got):\n%s", diff)
			}
			read := func(a mcpserver.HistoryArgs) mcpserver.Page {
				res := call(t, cs, mcpserver.ToolHistory, a)
				if res.IsError {
					t.Fatalf("history refused: %s", resultText(res))
				}
				var p mcpserver.Page
				structured(t, res, &p)
				p.Text = resultText(res)
				return p
			}
			for _, dir := range []mcpserver.Direction{mcpserver.OldestFirst, mcpserver.NewestFirst} {
				assemble(t, walk(t, read, dir, 3000), dir, msgs)
			}
			refusal(t, call(t, cs, mcpserver.ToolHistory, map[string]any{"cursor": "forged"}), baton.ErrInvalid.Code)
			refusal(t, call(t, cs, mcpserver.ToolHistory, map[string]any{"maxChars": "many"}), baton.ErrInvalid.Code)

			// Another handoff's name with this token, and a revoked grant.
			other := acc
			other.Handoff = "hof-2"
			refusal(t, call(t, f.connect(t, kind, other), mcpserver.ToolHistory, nil), baton.ErrConflict.Code)
			f.srv.Revoke(acc)
			refusal(t, call(t, cs, mcpserver.ToolHistory, nil), baton.ErrConflict.Code)
		})
	}
}

func TestHistoryIsNotOfferedToAReportTurn(t *testing.T) {
	f := newFixture(t, fixtureOpts{history: func(context.Context, baton.WorkspaceID, baton.HandoffID) (mcpserver.History, error) {
		return mcpserver.MemHistory{}, nil
	}})
	_, _, acc := f.reportTurn(t, f.ws, f.src.ID)
	for _, kind := range []string{"memory", "http"} {
		cs := f.connect(t, kind, acc)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpserver.ToolHistory})
		if err == nil && !res.IsError {
			t.Fatalf("%s: a report turn read the history: %s", kind, resultText(res))
		}
	}
	// Without a History the target is told so.
	g := newFixture(t, fixtureOpts{})
	cs := g.connect(t, "memory", g.srv.GrantTarget(g.ws, "hof-1"))
	refusal(t, call(t, cs, mcpserver.ToolHistory, nil), baton.ErrUnsupported.Code)
}
