package session

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton/recap"
)

func u(text string) recap.Event {
	return recap.Event{Speaker: recap.User, Kind: recap.Message, Text: text}
}
func a(text string) recap.Event {
	return recap.Event{Speaker: recap.Agent, Kind: recap.Message, Text: text}
}
func note(text string) recap.Event {
	return recap.Event{Kind: recap.Note, Text: text}
}

func TestWithoutEcho(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name   string
		events []recap.Event
		prompt string
		want   []recap.Event
	}{
		{"no echo", []recap.Event{u("task"), a("ok")}, "go on", []recap.Event{u("task"), a("ok")}},
		{"echo dropped", []recap.Event{u("task"), a("ok"), u("go on")}, "go on", []recap.Event{u("task"), a("ok")}},
		{"echo in chunks", []recap.Event{a("ok"), u("go"), u(" on")}, "go on", []recap.Event{a("ok")}},
		{"echo with white space", []recap.Event{a("ok"), u("\n go on \n")}, "go on\n", []recap.Event{a("ok")}},
		{"echo after a note, note kept", []recap.Event{a("ok"), note("queued"), u("go on")}, "go on", []recap.Event{a("ok"), note("queued")}},
		{"note after the echo dropped with it", []recap.Event{a("ok"), u("go on"), note("seeded")}, "go on", []recap.Event{a("ok")}},
		{"an earlier user chunk kept", []recap.Event{a("ok"), u("first. "), u("go on")}, "go on", []recap.Event{a("ok"), u("first. ")}},
		{"answered already: not an echo", []recap.Event{u("go on"), a("done")}, "go on", []recap.Event{u("go on"), a("done")}},
		{"only a prefix matches", []recap.Event{u("go on and on")}, "go on", []recap.Event{u("go on and on")}},
		{"long user text before the echo", []recap.Event{u(long), u("go on")}, "go on", []recap.Event{u(long)}},
		{"long user text, no echo", []recap.Event{u(long), u("stop")}, "go on", []recap.Event{u(long), u("stop")}},
		{"agent speaks the prompt", []recap.Event{a("go on")}, "go on", []recap.Event{a("go on")}},
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
	events := []recap.Event{u("a"), a("b"), u("c"), a("d"), u("go on")}
	for n := range len(events) {
		var got []recap.Event
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
	events := func(yield func(recap.Event) bool) {
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
