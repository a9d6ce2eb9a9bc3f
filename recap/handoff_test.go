package recap

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"

	"github.com/google/go-cmp/cmp"
)

// handoffSection returns the content of a "## " section of a handoff prompt.
func handoffSection(t *testing.T, out, heading string) string {
	t.Helper()
	next := "\n## "
	if heading == "Conversation so far" {
		next = handoffClosingLn
	}
	return sectionOf(t, out, heading, next)
}

func TestHandoffPromptSections(t *testing.T) {
	base := func() HandoffInput {
		return HandoffInput{
			Title:   "Continue on another model",
			Source:  store.Session{ID: "ses_1", Config: baton.EngineConfig{Engine: "claude", Model: "opus"}, NativeID: "n-1"},
			Mission: "Ship the login page",
		}
	}
	tests := []struct {
		name    string
		edit    func(*HandoffInput)
		heading string
		want    string
	}{
		{"wraps the report verbatim", func(in *HandoffInput) { in.Report = "## Objective\nShip it.\n" },
			"Report from the previous session", "## Objective\nShip it.\n"},
		{"says no LLM summary was made without a report", func(in *HandoffInput) { in.Report = "  " },
			"Report from the previous session", noReport},
		{"quotes the mission", nil, "Mission", "> Ship the login page\n"},
		{"falls back on the task without a mission", func(in *HandoffInput) { in.Mission, in.Conversation.Task = "", "Fix bug 7" },
			"Mission", "> Fix bug 7\n"},
		{"says no mission was recorded", func(in *HandoffInput) { in.Mission = "" }, "Mission", noMission},
		{"lists pending instructions by id and state",
			func(in *HandoffInput) {
				in.Instructions = []store.Instruction{{ID: "ins_2", State: "queued", Text: "Also add a logout button"}, {ID: "ins_3", State: "delivered"}}
			},
			"Pending instructions", "- ins_2 (queued)\n  > Also add a logout button\n- ins_3 (delivered)\n  (no text)\n"},
		{"says no instructions are pending", nil, "Pending instructions", noInstructions},
		{"replays the conversation",
			func(in *HandoffInput) {
				in.Conversation.Events = slices.Values(events(transcript.User, "Ship the login page", transcript.Agent, "On it"))
			},
			"Conversation so far", "User:\n> " + taskStandIn + "\n\nAgent:\n> On it\n"},
		{"says how the source ended", func(in *HandoffInput) { in.Conversation.Ending = "stopped for the transfer" },
			"How the previous session ended", "> stopped for the transfer\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			if tt.edit != nil {
				tt.edit(&in)
			}
			out := HandoffPrompt(in)
			if diff := cmp.Diff(tt.want, handoffSection(t, out, tt.heading)); diff != "" {
				t.Errorf("section %q (-want +got):\n%s", tt.heading, diff)
			}
			if !strings.HasPrefix(out, "# Session transfer: Continue on another model\n\n") ||
				!strings.Contains(out, "Previous session: ses_1 (engine claude, model opus, native id n-1).\n") {
				t.Errorf("heading or source missing:\n%s", out)
			}
			if !strings.HasSuffix(out, handoffClosingLn) {
				t.Errorf("closing line missing:\n%s", out)
			}
		})
	}
}

// bigHandoff returns an input whose every section is far over its budget.
func bigHandoff() HandoffInput {
	para := strings.Repeat("All work and no play makes Jack a dull boy. ", 50) + "\n"
	in := HandoffInput{
		Title:   strings.Repeat("title ", 100),
		Source:  store.Session{ID: baton.SessionID(strings.Repeat("i", 500)), Config: baton.EngineConfig{Engine: "claude", Model: "opus"}},
		Mission: strings.Repeat(para, 200),
		Report:  strings.Repeat(para, 200),
		Conversation: Input{Ending: strings.Repeat("panic: ", 1000),
			Events: slices.Values(events(transcript.User, "1 "+para, transcript.Agent, "2 "+para, transcript.User, "3 "+para, transcript.Agent, "4 "+para))},
	}
	for i := range 300 {
		in.Instructions = append(in.Instructions, store.Instruction{ID: baton.InstructionID(fmt.Sprint("ins_", i)), State: "queued", Text: para})
	}
	return in
}

// TestHandoffPromptBudgets checks that every section stays within its
// budget and the whole prompt within the total, with sections squeezed in
// the documented order.
func TestHandoffPromptBudgets(t *testing.T) {
	lims := HandoffLimits{MissionChars: 3000, ReportChars: 2000, InstructionChars: 2500,
		Conversation: Limits{MaxChars: 1500, MaxMessageChars: 400}}
	budgets := map[string]int{"Mission": 3000, "Report from the previous session": 2000,
		"Pending instructions": 2500, "Conversation so far": 1500, "How the previous session ended": 400}

	in := bigHandoff()
	in.Limits = lims
	out := HandoffPrompt(in)
	for heading, budget := range budgets {
		got := handoffSection(t, out, heading)
		slack := budget / 10 // what water-filling leaves
		if heading == "Conversation so far" {
			slack = 420 // a whole message: 400 runes of text, its label and quoting
		}
		if n := utf8.RuneCountInString(got); n > budget || n < budget-slack {
			t.Errorf("%s: %d runes, want at most %d and over %d", heading, n, budget, budget-slack)
		}
	}
	if ins := handoffSection(t, out, "Pending instructions"); !strings.Contains(ins, " more instructions omitted...\n") {
		t.Errorf("instructions do not say how many were left out:\n%s", ins)
	}
	full := utf8.RuneCountInString(out)

	// Squeezed a little: the largest section is clipped to the level the
	// total leaves, the others stay whole.
	before := map[string]string{}
	for heading := range budgets {
		before[heading] = handoffSection(t, out, heading)
	}
	in = bigHandoff()
	in.Limits = lims
	in.Limits.MaxChars = full - 500
	out = HandoffPrompt(in)
	if n := utf8.RuneCountInString(out); n > full-500 {
		t.Errorf("prompt is %d runes, want at most %d", n, full-500)
	}
	for heading := range budgets {
		got := handoffSection(t, out, heading)
		if heading == "Mission" {
			if n := utf8.RuneCountInString(got); n > 2500 || n < 2250 {
				t.Errorf("mission squeezed to %d runes, want the level, 2500", n)
			}
			continue
		}
		if got != before[heading] {
			t.Errorf("%s changed though under the level", heading)
		}
	}

	// At the smallest total every section gives way but the prompt holds.
	in = bigHandoff()
	in.Limits = HandoffLimits{MaxChars: 1}
	out = HandoffPrompt(in)
	if n := utf8.RuneCountInString(out); n > minHandoffChars {
		t.Errorf("prompt is %d runes, want at most %d", n, minHandoffChars)
	}
	for _, h := range []string{"# Session transfer: ", "\n## Mission\n", "\n## Pending instructions\n", handoffClosingLn} {
		if !strings.Contains(out, h) {
			t.Errorf("squeezed prompt lacks %q", h)
		}
	}
	// Omitted in order: the conversation first, the mission last.
	order := []string{"Conversation so far", "How the previous session ended",
		"Pending instructions", "Report from the previous session", "Mission"}
	kept := false
	for _, h := range order {
		omitted := handoffSection(t, out, h) == omittedSection
		if omitted && kept {
			t.Errorf("%s omitted though an earlier one in the order was kept:\n%s", h, out)
		}
		kept = kept || !omitted
	}

}

// TestHandoffPromptDefaults checks that the default total never squeezes a
// section filled to its default budget.
func TestHandoffPromptDefaults(t *testing.T) {
	out := HandoffPrompt(bigHandoff())
	if strings.Contains(out, omittedSection) {
		t.Errorf("a section was omitted under the defaults")
	}
	if n := utf8.RuneCountInString(out); n > defaultHandoffChars {
		t.Errorf("prompt is %d runes, want at most %d", n, defaultHandoffChars)
	}
}

func TestHandoffPromptDeterministic(t *testing.T) {
	a, b := HandoffPrompt(bigHandoff()), HandoffPrompt(bigHandoff())
	if a != b {
		t.Errorf("two calls differ:\n%s", cmp.Diff(a, b))
	}
}

// TestFitSections checks the sharing of the total between sections: the
// water level, and omission in squeeze order when the level is too low.
func TestFitSections(t *testing.T) {
	mk := func(name string, squeeze, size, floor int) *section {
		return &section{heading: name, squeeze: squeeze, floor: floor, content: strings.Repeat("x", size),
			render: func(b int) string { return strings.Repeat("y", b) }}
	}
	tests := []struct {
		name  string
		avail int
		want  map[string]string // "keep", "omit" or the clipped size
	}{
		{"fits", 3000, map[string]string{"a": "keep", "b": "keep", "c": "keep"}},
		{"the largest is clipped to the level", 2500, map[string]string{"a": "keep", "b": "1100", "c": "1100"}},
		{"both large ones clipped", 1000, map[string]string{"a": "keep", "b": "350", "c": "350"}},
		{"omitted in squeeze order", 600, map[string]string{"a": "279", "b": "omit", "c": "279"}},
		{"all but the last in squeeze order omitted", 300, map[string]string{"a": "216", "b": "omit", "c": "omit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secs := []*section{mk("a", 3, 300, 100), mk("b", 1, 1200, 300), mk("c", 2, 1400, 200)}
			fitSections(secs, tt.avail)
			total := 0
			for _, s := range secs {
				got := fmt.Sprint(utf8.RuneCountInString(s.content))
				switch {
				case s.content == omittedSection:
					got = "omit"
				case strings.HasPrefix(s.content, "x"):
					got = "keep"
				}
				if got != tt.want[s.heading] {
					t.Errorf("%s: %s, want %s", s.heading, got, tt.want[s.heading])
				}
				total += utf8.RuneCountInString(s.content)
			}
			if total > tt.avail {
				t.Errorf("total %d over %d", total, tt.avail)
			}
		})
	}
}

// TestHandoffPromptKeepsAFullReport checks that the largest report a
// transfer accepts (24,000 characters) passes whole under the defaults.
func TestHandoffPromptKeepsAFullReport(t *testing.T) {
	report := strings.Repeat(strings.Repeat("é", 99)+"\n", 240)
	report = report[:len(report)-1] + "x" // 240 lines of 100 runes
	if n := utf8.RuneCountInString(report); n != 24000 {
		t.Fatalf("report of %d runes", n)
	}
	out := HandoffPrompt(HandoffInput{Report: report})
	if got := handoffSection(t, out, "Report from the previous session"); got != report+"\n" {
		t.Errorf("report clipped to %d runes", utf8.RuneCountInString(got))
	}
}
