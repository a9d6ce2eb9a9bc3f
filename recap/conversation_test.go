package recap

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"

	"github.com/google/go-cmp/cmp"
)

var doneMarker = regexp.MustCompile(`\s*DONE\s*$`)

// TestConversationRules has one row per rule of the replay. want is the
// exact conversation part; has and not are checked on the whole briefing.
func TestConversationRules(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name string
		in   Input
		evs  []transcript.Event
		lim  Limits
		want string
		has  []string
		not  []string
	}{
		{
			name: "keeps user and agent text",
			evs:  events(transcript.User, "hello", transcript.Agent, "hi there"),
			want: "User:\n> hello\n\nAgent:\n> hi there\n",
		},
		{
			name: "never replays tool calls, lifecycle lines or notes",
			evs: events(transcript.User, "clean up", transcript.ToolCall, "rm -rf /tmp/scratch", transcript.Lifecycle, "session started",
				transcript.Note, "a fresh session was seeded", transcript.Agent, "done"),
			want: "User:\n> clean up\n\nAgent:\n> done\n",
			not:  []string{"rm -rf", "session started", "fresh session was seeded"},
		},
		{
			name: "drops unknown speakers and kinds",
			evs: []transcript.Event{{Speaker: 0, Kind: transcript.Message, Text: "no speaker"}, {Speaker: 9, Kind: transcript.Message, Text: "odd speaker"},
				{Speaker: transcript.User, Kind: 0, Text: "no kind"}, {Speaker: transcript.User, Kind: 42, Text: "odd kind"},
				{Speaker: transcript.User, Kind: transcript.Message, Text: "kept"}},
			want: "User:\n> kept\n",
		},
		{
			name: "drops empty and whitespace-only text",
			evs:  events(transcript.User, "", transcript.Agent, " \n\t", transcript.User, "\u00a0\u2003", transcript.Agent, "answer"),
			want: "Agent:\n> answer\n",
		},
		{
			name: "drops heartbeat lines",
			evs: events(transcript.Agent, "[heartbeat]", transcript.Agent, "Still working… (5m 3s)", transcript.Agent, "keep-alive\nheartbeat",
				transcript.User, "the heartbeat monitor is down"),
			want: "User:\n> the heartbeat monitor is down\n",
		},
		{
			name: "strips a trailing DONE marker",
			evs:  events(transcript.Agent, "All tests pass.\nDONE\n"),
			lim:  Limits{Markers: []*regexp.Regexp{doneMarker}},
			want: "Agent:\n> All tests pass.\n",
		},
		{
			name: "strips a marker that is trailing only once chunks are joined",
			evs:  events(transcript.Agent, "All good. DO", transcript.Agent, "NE"),
			lim:  Limits{Markers: []*regexp.Regexp{doneMarker}},
			want: "Agent:\n> All good.\n",
		},
		{
			name: "keeps a marker word that is not trailing",
			evs:  events(transcript.Agent, "DONE is what the tool prints at the end"),
			lim:  Limits{Markers: []*regexp.Regexp{doneMarker}},
			want: "Agent:\n> DONE is what the tool prints at the end\n",
		},
		{
			name: "strips repeated markers",
			evs:  events(transcript.Agent, "Finished.\nDONE\nDONE"),
			lim:  Limits{Markers: []*regexp.Regexp{doneMarker}},
			want: "Agent:\n> Finished.\n",
		},
		{
			name: "a marker-only message is no message",
			evs:  events(transcript.User, "go", transcript.Agent, "DONE"),
			lim:  Limits{Markers: []*regexp.Regexp{doneMarker}},
			want: "User:\n> go\n",
		},
		{
			name: "strips a marker anywhere when the pattern says so",
			evs:  events(transcript.Agent, "first <<STOP>> second"),
			lim:  Limits{Markers: []*regexp.Regexp{regexp.MustCompile(`<<STOP>>\s*`)}},
			want: "Agent:\n> first second\n",
		},
		{
			name: "coalesces chunks of one speaker verbatim",
			evs:  events(transcript.Agent, "Hel", transcript.Agent, "lo, ", transcript.Agent, " ", transcript.Agent, "world"),
			want: "Agent:\n> Hello,  world\n",
		},
		{
			name: "a tool call between chunks breaks the line",
			evs:  events(transcript.Agent, "Reading the file.", transcript.ToolCall, "cat a.go", transcript.Agent, "It has 3 lines."),
			want: "Agent:\n> Reading the file.\n> It has 3 lines.\n",
		},
		{
			name: "speakers alternate",
			evs:  events(transcript.User, "a", transcript.User, "b", transcript.Agent, "c", transcript.User, "d"),
			want: "User:\n> ab\n\nAgent:\n> c\n\nUser:\n> d\n",
		},
		{
			name: "redacts configured secrets, longest first",
			evs:  events(transcript.User, "pw hunter2hunter2-and-more, then hunter2hunter2"),
			lim:  Limits{Secrets: []string{"hunter2hunter2", "hunter2hunter2-and-more"}},
			want: "User:\n> pw [REDACTED], then [REDACTED]\n",
		},
		{
			name: "redacts a secret split across chunks",
			evs:  events(transcript.User, "the key is hunter2hun", transcript.User, "ter2, keep it"),
			lim:  Limits{Secrets: []string{"hunter2hunter2"}},
			want: "User:\n> the key is [REDACTED], keep it\n",
		},
		{
			name: "redacts secrets in the task and the ending",
			in:   Input{Task: "deploy with hunter2hunter2", Ending: "crashed printing ghp_0123456789abcdefghijABCDEFGHIJ012345"},
			evs:  events(transcript.User, "go"),
			lim:  Limits{Secrets: []string{"hunter2hunter2"}},
			want: "User:\n> go\n",
			has:  []string{"> deploy with [REDACTED]\n", "> crashed printing [REDACTED]\n"},
			not:  []string{"hunter2", "ghp_0"},
		},
		{
			name: "omission note, singular",
			evs:  events(transcript.User, long[:300], transcript.Agent, long[:300], transcript.User, "last"),
			lim:  Limits{MaxChars: 400},
			want: "...1 earlier message omitted...\n\nAgent:\n> " + long[:300] + "\n\nUser:\n> last\n",
		},
		{
			name: "omission note, plural",
			evs:  events(transcript.User, long[:300], transcript.Agent, long[:300], transcript.User, long[:300], transcript.Agent, "last"),
			lim:  Limits{MaxChars: 400},
			want: "...2 earlier messages omitted...\n\nUser:\n> " + long[:300] + "\n\nAgent:\n> last\n",
		},
		{
			name: "never drops the newest message, clips it to what is left",
			evs:  events(transcript.User, "older", transcript.Agent, long),
			lim:  Limits{MaxChars: 400, MaxMessageChars: 5000},
			want: "...1 earlier message omitted...\n\nAgent:\n> " + long[:400-33-7-2-14-1] + truncationMark + "\n",
		},
		{
			name: "says nothing was exchanged without messages",
			evs:  events(transcript.ToolCall, "ls", transcript.Agent, "   "),
			want: "Nothing was exchanged.\n",
		},
		{
			name: "says the conversation was not included without events",
			want: "The conversation was not included in this briefing: it was not available.\n",
			not:  []string{"Nothing was exchanged"},
		},
		{
			name: "says why the conversation was not included, and where to read it",
			in:   Input{Omitted: "the user chose\nnot to share it", HistoryTool: "read_source_history"},
			want: "The conversation was not included in this briefing: the user chose not to share it. " +
				"Read it with the read_source_history tool when you need it.\n",
		},
		{
			name: "says nothing was exchanged when no message was",
			evs:  events(transcript.Lifecycle, "session started"),
			want: "Nothing was exchanged.\n",
		},
		{
			name: "leaves a report-only turn out",
			evs: []transcript.Event{
				{Speaker: transcript.User, Kind: transcript.Message, Text: "fix the parser"},
				{Speaker: transcript.Agent, Kind: transcript.Message, Text: "fixed"},
				{Speaker: transcript.User, Kind: transcript.Message, Text: "Write the report. Do not continue the work.", Turn: transcript.ReportOnly},
				{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Report submitted.", Turn: transcript.ReportOnly},
			},
			want: "User:\n> fix the parser\n\nAgent:\n> fixed\n",
			not:  []string{"Do not continue", "Report submitted"},
		},
		{
			name: "no message runs across a report-only turn",
			evs: []transcript.Event{
				{Speaker: transcript.Agent, Kind: transcript.Message, Text: "before"},
				{Speaker: transcript.Agent, Kind: transcript.Message, Text: "the report", Turn: transcript.ReportOnly},
				{Speaker: transcript.Agent, Kind: transcript.Message, Text: "after"},
			},
			want: "Agent:\n> before\n\nAgent:\n> after\n",
		},
		{
			name: "a conversation of report-only turns alone is empty",
			evs: []transcript.Event{
				{Speaker: transcript.User, Kind: transcript.Message, Text: "Write the report.", Turn: transcript.ReportOnly},
			},
			want: "Nothing was exchanged.\n",
		},
		{
			name: "leaves the ending out when blank",
			in:   Input{Ending: " \n\t"},
			evs:  events(transcript.User, "hi"),
			want: "User:\n> hi\n",
			not:  []string{"How the previous session ended"},
		},
		{
			name: "states the ending when known",
			in:   Input{Ending: "killed by a restart before the engine started"},
			evs:  events(transcript.User, "hi"),
			want: "User:\n> hi\n",
			has:  []string{"\n## How the previous session ended\n\n> killed by a restart before the engine started\n"},
		},
		{
			name: "states the task once",
			in:   Input{Task: "Fix the flaky login test"},
			evs:  events(transcript.User, "Fix the flaky login test", transcript.Agent, "On it.", transcript.User, "Fix the flaky login test"),
			want: "User:\n> " + taskStandIn + "\n\nAgent:\n> On it.\n\nUser:\n> " + taskStandIn + "\n",
			has:  []string{"## Original task\n\n> Fix the flaky login test\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if in.Task == "" {
				in.Task = "the task"
			}
			if tt.evs != nil {
				in.Events = slices.Values(tt.evs)
			}
			out := Conversation(in, tt.lim)
			if diff := cmp.Diff(tt.want, replayOf(t, out)); diff != "" {
				t.Errorf("replay mismatch (-want +got):\n%s", diff)
			}
			for _, s := range tt.has {
				if !strings.Contains(out, s) {
					t.Errorf("briefing lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.not {
				if strings.Contains(out, s) {
					t.Errorf("briefing has %q:\n%s", s, out)
				}
			}
			if n := strings.Count(out, "## Original task"); n != 1 {
				t.Errorf("task section %d times", n)
			}
		})
	}
}

// TestConversationClipsAtRuneBoundaries checks that a message of multi-byte
// characters is clipped to MaxMessageChars runes, mark included, without
// splitting a character.
func TestConversationClipsAtRuneBoundaries(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("日本語", 200),
		strings.Repeat("é", 150) + strings.Repeat("🙂", 150),
		strings.Repeat("a", 85) + strings.Repeat("🙂", 50), // the cut falls between 4-byte runes
	} {
		out := Conversation(Input{Events: slices.Values(events(transcript.Agent, text))}, Limits{MaxMessageChars: 100})
		body := strings.TrimPrefix(strings.TrimSuffix(replayOf(t, out), "\n"), "Agent:\n> ")
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8: %q", out)
		}
		if !strings.HasSuffix(body, truncationMark) {
			t.Fatalf("no truncation mark: %q", body)
		}
		if n := utf8.RuneCountInString(body); n != 100 {
			t.Errorf("clipped to %d runes, want 100", n)
		}
		if kept := strings.TrimSuffix(body, truncationMark); !strings.HasPrefix(text, kept) {
			t.Errorf("kept %q is not a prefix of the text", kept)
		}
	}
}

// TestConversationNeverLeaksAPartialSecret puts a secret across the clip
// point: it is redacted whole or left out whole, never cut.
func TestConversationNeverLeaksAPartialSecret(t *testing.T) {
	secret := "Zq9vLw3mRt7yXk2pNa5s"
	for pad := 60; pad <= 100; pad++ {
		text := strings.Repeat("w", pad) + secret + strings.Repeat(" tail", 100)
		out := Conversation(Input{Events: slices.Values(events(transcript.User, text))},
			Limits{MaxMessageChars: 100, Secrets: []string{secret}})
		for n := 4; n <= len(secret); n++ {
			if strings.Contains(out, secret[:n]) {
				t.Fatalf("pad %d: %q of the secret leaked:\n%s", pad, secret[:n], out)
			}
		}
	}
}

// TestConversationBoundsTheBriefing checks the documented bound of the whole
// briefing with a huge task, ending and transcript.
func TestConversationBoundsTheBriefing(t *testing.T) {
	huge := strings.Repeat("line of text\n", 100000)
	lim := Limits{MaxChars: 1000, MaxMessageChars: 300}
	out := Conversation(Input{Task: huge, Ending: huge, Events: slices.Values(events(transcript.User, huge, transcript.Agent, huge))}, lim)
	if n, max := utf8.RuneCountInString(out), 2*1000+300+600; n > max {
		t.Errorf("briefing is %d runes, want at most %d", n, max)
	}
	if n := utf8.RuneCountInString(replayOf(t, out)); n > 1000 {
		t.Errorf("replay is %d runes, want at most 1000", n)
	}
}

// TestConversationHugeLimits checks that limits near math.MaxInt neither
// overflow nor allocate by the limit.
func TestConversationHugeLimits(t *testing.T) {
	lim := Limits{MaxChars: math.MaxInt, MaxMessageChars: math.MaxInt}
	evs := events(transcript.User, "hello", transcript.Agent, strings.Repeat("long answer ", 1000))
	allocs := testing.AllocsPerRun(5, func() {
		out := Conversation(Input{Task: "t", Events: slices.Values(evs)}, lim)
		if !strings.Contains(out, "Agent:\n> long answer long answer") || strings.Contains(out, "omitted") {
			t.Fatalf("unexpected replay:\n%s", out)
		}
	})
	if allocs > 100 {
		t.Errorf("%v allocations", allocs)
	}
	hl := HandoffLimits{MaxChars: math.MaxInt, MissionChars: math.MaxInt, ReportChars: math.MaxInt,
		InstructionChars: math.MaxInt, Conversation: lim}
	out := HandoffPrompt(HandoffInput{Mission: "m", Instructions: []store.Instruction{{ID: "a", Text: "ok"}},
		Conversation: Input{Events: slices.Values(evs)}, Limits: hl})
	if !strings.Contains(out, "> m\n") || !strings.Contains(out, "  > ok\n") {
		t.Errorf("unexpected prompt:\n%s", out)
	}
}
