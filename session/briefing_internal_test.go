package session

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/transcript"
)

func u(text string) transcript.Event {
	return transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: text}
}
func a(text string) transcript.Event {
	return transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: text}
}
func note(text string) transcript.Event {
	return transcript.Event{Kind: transcript.Note, Text: text}
}

func TestWithoutEcho(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name   string
		events []transcript.Event
		prompt string
		want   []transcript.Event
	}{
		{"no echo", []transcript.Event{u("task"), a("ok")}, "go on", []transcript.Event{u("task"), a("ok")}},
		{"echo dropped", []transcript.Event{u("task"), a("ok"), u("go on")}, "go on", []transcript.Event{u("task"), a("ok")}},
		{"echo in chunks", []transcript.Event{a("ok"), u("go"), u(" on")}, "go on", []transcript.Event{a("ok")}},
		{"echo with white space", []transcript.Event{a("ok"), u("\n go on \n")}, "go on\n", []transcript.Event{a("ok")}},
		{"echo after a note, note kept", []transcript.Event{a("ok"), note("queued"), u("go on")}, "go on", []transcript.Event{a("ok"), note("queued")}},
		{"note after the echo dropped with it", []transcript.Event{a("ok"), u("go on"), note("seeded")}, "go on", []transcript.Event{a("ok")}},
		{"an earlier user chunk kept", []transcript.Event{a("ok"), u("first. "), u("go on")}, "go on", []transcript.Event{a("ok"), u("first. ")}},
		{"answered already: not an echo", []transcript.Event{u("go on"), a("done")}, "go on", []transcript.Event{u("go on"), a("done")}},
		{"only a prefix matches", []transcript.Event{u("go on and on")}, "go on", []transcript.Event{u("go on and on")}},
		{"long user text before the echo", []transcript.Event{u(long), u("go on")}, "go on", []transcript.Event{u(long)}},
		{"long user text, no echo", []transcript.Event{u(long), u("stop")}, "go on", []transcript.Event{u(long), u("stop")}},
		{"agent speaks the prompt", []transcript.Event{a("go on")}, "go on", []transcript.Event{a("go on")}},
		{"empty transcript", nil, "go on", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := slices.Collect(withoutEcho(slices.Values(tt.events), tt.prompt))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Fatalf("events (-want +got):\n%s", d)
			}
		})
	}
}

func TestWithoutEchoStopsEarly(t *testing.T) {
	events := []transcript.Event{u("a"), a("b"), u("c"), a("d"), u("go on")}
	for n := range len(events) {
		var got []transcript.Event
		for ev := range withoutEcho(slices.Values(events), "go on") {
			if len(got) == n {
				break
			}
			got = append(got, ev)
		}
		if d := cmp.Diff(events[:n], got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("stop after %d (-want +got):\n%s", n, d)
		}
	}
}

// The held-back window stays bounded however long the trailing user run:
// events come out while the source is still producing.
func TestWithoutEchoBounded(t *testing.T) {
	produced, consumed := 0, 0
	events := func(yield func(transcript.Event) bool) {
		for range 10 * echoEvents {
			if lag := produced - consumed; lag > echoEvents+1 {
				t.Fatalf("%d events held back, more than %d", lag, echoEvents+1)
			}
			produced++
			if !yield(u("chunk ")) {
				return
			}
		}
	}
	for range withoutEcho(events, "go on") {
		consumed++
	}
	if consumed != 10*echoEvents {
		t.Fatalf("yielded %d of %d events", consumed, 10*echoEvents)
	}
	if withoutEcho(nil, "x") != nil {
		t.Fatal("nil events should stay nil")
	}
}

func TestQuoted(t *testing.T) {
	if got, want := quoted("a\n\nb"), "> a\n>\n> b\n"; got != want {
		t.Fatalf("quoted = %q, want %q", got, want)
	}
	// The quote form matches what recap renders for a task.
	b := recap.Conversation(recap.Input{Task: "line one\n\nline two"}, recap.Limits{})
	if !strings.Contains(b, quoted("line one\n\nline two")) {
		t.Fatalf("recap's task quote changed:\n%s", b)
	}
}
