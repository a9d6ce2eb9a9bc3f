package recap

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./recap -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// session is a small but complete transcript: streamed chunks, a tool call,
// a heartbeat, lifecycle lines, a marker, a token and an environment secret.
func session() []transcript.Event {
	return []transcript.Event{
		{Speaker: 0, Kind: transcript.Lifecycle, Text: "session started (claude, opus)"},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "The login test is flaky on CI. Can you find out why?"},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Let me look at "},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "the test first."},
		{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "read login_test.go"},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "It sleeps 10ms and expects the session to be written; "},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "[heartbeat]"},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "under load it is not. I will poll instead.\nDONE"},
		{Speaker: 0, Kind: transcript.Note, Text: "usage limit reached, retry at 14:00"},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Use the staging token s3cr3t-staging-token-77 to reproduce, and push with ghp_0123456789abcdefghijABCDEFGHIJ012345."},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Reproduced with the staging token. " + strings.Repeat("The poll loop now waits up to 2s; ", 12) + "日本語のテキストも大丈夫。"},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "   "},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Great, open the PR."},
		// A transfer's report-only turn: not conversation, never replayed.
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Write your handoff report. Do not continue the work.", Turn: transcript.ReportOnly},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Report submitted.", Turn: transcript.ReportOnly},
	}
}

func sessionLimits() Limits {
	return Limits{
		MaxChars:        600,
		MaxMessageChars: 300,
		Markers:         []*regexp.Regexp{regexp.MustCompile(`\s*DONE\s*$`)},
		Secrets:         []string{"s3cr3t-staging-token-77"},
	}
}

func TestConversationGolden(t *testing.T) {
	tests := []struct {
		name string
		in   Input
		lim  Limits
	}{
		{"conversation.golden", Input{Task: "Fix the flaky login test", Ending: "The run was killed by a restart of baton while it waited for its working tree.",
			Events: slices.Values(session())}, sessionLimits()},
		{"conversation_empty.golden", Input{Task: "Fix the flaky login test",
			Events: slices.Values([]transcript.Event{{Kind: transcript.Lifecycle, Text: "accepted"}})}, Limits{}},
		{"conversation_not_included.golden", Input{Task: "Fix the flaky login test", Ending: "killed by a restart",
			Omitted: "no transcript of the previous session is available here"}, Limits{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { golden(t, tt.name, Conversation(tt.in, tt.lim)) })
	}
}

func handoffInput() HandoffInput {
	return HandoffInput{
		Title:        "Continue on gpt-5",
		Source:       store.Session{ID: "ses_01J9", Config: baton.EngineConfig{Engine: "claude", Model: "opus"}, NativeID: "6f1c2a"},
		Mission:      "Make the login test reliable and open a PR.",
		Instructions: []store.Instruction{{ID: "ins_7", State: "queued", Text: "Mention the CI run in the PR description."}},
		Conversation: Input{Task: "Fix the flaky login test", Ending: "Stopped for the transfer.", Events: slices.Values(session())},
		Limits:       HandoffLimits{Conversation: sessionLimits()},
	}
}

func TestHandoffPromptGolden(t *testing.T) {
	withReport := handoffInput()
	withReport.Report = "## Objective\nMake the login test reliable.\n\n## Verified progress\n- The poll loop fix passes 200 runs.\n\n## Next action\nOpen the PR.\n"
	withFacts := withReport
	withFacts.Facts = "Git: branch `fix/login-flake` at `238587d4b5dc`.\n\nUncommitted files (1):\n- `.M` `login/login_test.go`\n\n" +
		"Checks the previous session ran, oldest first (1):\n- `GH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 go test ./login`: exit 0, `ok`\n"
	squeezedFacts := withFacts
	squeezedFacts.Mission = strings.Repeat("Make the login test reliable. ", 200)
	squeezedFacts.Limits.MaxChars = minHandoffChars
	squeezed := handoffInput()
	squeezed.Mission = strings.Repeat("Make the login test reliable. ", 200)
	squeezed.Limits.MaxChars = minHandoffChars
	noTranscript := handoffInput()
	noTranscript.Conversation.Events = nil
	noTranscript.Conversation.Omitted = "no transcript of the source session is available here"
	noTranscript.Conversation.HistoryTool = "read_source_history"
	withheld := withReport
	withheld.ReportOmitted = "the user chose not to share it"
	withheld.Conversation.Events = nil
	withheld.Conversation.Omitted = "the user chose not to share it"
	empty := handoffInput()
	empty.Conversation.Events = slices.Values([]transcript.Event{{Kind: transcript.Lifecycle, Text: "claude session 6f1c2a"}})
	tests := []struct {
		name string
		in   HandoffInput
	}{
		{"handoff_report.golden", withReport},
		{"handoff_no_report.golden", handoffInput()},
		{"handoff_squeezed.golden", squeezed},
		{"handoff_facts.golden", withFacts},
		{"handoff_facts_squeezed.golden", squeezedFacts},
		{"handoff_no_transcript.golden", noTranscript},
		{"handoff_withheld.golden", withheld},
		{"handoff_empty_conversation.golden", empty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { golden(t, tt.name, HandoffPrompt(tt.in)) })
	}
}
