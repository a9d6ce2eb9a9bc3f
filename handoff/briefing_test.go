package handoff_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

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
		t.Fatalf("%v (go test ./handoff -run Golden -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// sourceTalk is a source conversation as an engine records it: the task,
// streamed answers, a tool call, a token, and the report-only turn that
// asked for the handoff report, with its answer.
func sourceTalk() []transcript.Event {
	n, r := transcript.Normal, transcript.ReportOnly
	return []transcript.Event{
		{Kind: transcript.Lifecycle, Text: "claude launch started (fresh, normal turn)", Turn: n},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Make the parser accept trailing commas.", Turn: n},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Looking at ", Turn: n},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "parser.go first.", Turn: n},
		{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "tool Read parser.go", Turn: n},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Trailing commas parse now; go test ./... passes. I pushed with ghp_0123456789abcdefghijABCDEFGHIJ012345.", Turn: n},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Good. Next, the lexer's error positions.", Turn: n},
		{Kind: transcript.Lifecycle, Text: "claude launch started (resume, report-only turn)", Turn: r},
		{Speaker: transcript.User, Kind: transcript.Message, Text: handoff.ReportPrompt, Turn: r},
		{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "tool submit_session_handoff", Turn: r},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Report submitted; ending my turn.", Turn: r},
	}
}

func seq2(evs []transcript.Event) func(func(transcript.Event, error) bool) {
	return func(yield func(transcript.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func briefingInput(share baton.Share, report string) handoff.BriefingInput {
	return handoff.BriefingInput{
		Handoff:      store.Handoff{ID: "hof-1", Workspace: "ws-1", Attempt: 1, Share: share, Report: report},
		Workspace:    store.Workspace{ID: "ws-1", Mission: "Ship the parser rework."},
		Source:       &store.Session{ID: "ses-src", Config: baton.EngineConfig{Engine: "claude", Model: "opus"}, NativeID: "6f1c2a"},
		Instructions: []store.Instruction{{ID: "ins-1", State: store.InstructionPending, Text: "Mention the CI run in the PR."}},
	}
}

const goldenReport = "## Objective\nTrailing commas in the parser.\n\n## Next action\nThe lexer's error positions.\n"

// The three cases of a default briefing's conversation (a transcript, none
// to be had, an empty one) and the two choices that withhold part of it.
func TestDefaultBriefingGolden(t *testing.T) {
	withTalk := briefingInput(baton.ShareConversation, "")
	withTalk.Conversation = seq2(sourceTalk())
	none := briefingInput(baton.ShareConversation, "")
	none.ConversationOmitted, none.HistoryTool = "no transcript of it is available here", "read_source_history"
	empty := briefingInput(baton.ShareConversation, "")
	empty.Conversation = seq2(sourceTalk()[:1])
	reportOnly := briefingInput(baton.ShareReport, goldenReport)
	reportOnly.ConversationOmitted = "the user chose not to share it"
	nothing := briefingInput(baton.ShareNone, goldenReport)
	nothing.ConversationOmitted = "the user chose not to share it"
	for _, tc := range []struct {
		name     string
		in       handoff.BriefingInput
		has, not []string
	}{
		{"briefing_transcript.golden", withTalk,
			[]string{"> Make the parser accept trailing commas.", "> Looking at parser.go first.", "[REDACTED]"},
			[]string{"Nothing was exchanged", "Do not continue the work", "Report submitted", "ghp_", "not included"}},
		{"briefing_no_transcript.golden", none,
			[]string{"The conversation was not included in this briefing: no transcript of it is available here. Read it with the read_source_history tool"},
			[]string{"Nothing was exchanged"}},
		{"briefing_empty_conversation.golden", empty, []string{"Nothing was exchanged."}, []string{"not included"}},
		{"briefing_share_report.golden", reportOnly,
			[]string{goldenReport, "The conversation was not included in this briefing: the user chose not to share it."},
			[]string{"Make the parser accept", "read_source_history"}},
		{"briefing_share_none.golden", nothing,
			[]string{"report was not included in this briefing: the user chose not to share it", "conversation was not included"},
			[]string{"Trailing commas in the parser", "Make the parser accept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := handoff.DefaultBriefing(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.has {
				if !strings.Contains(got, s) {
					t.Errorf("briefing lacks %q", s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(got, s) {
					t.Errorf("briefing has %q", s)
				}
			}
			golden(t, tc.name, got)
		})
	}
}

// A transcript that fails midway is not replayed in part: the briefing
// says it could not be read. A context that ended fails the briefing.
func TestDefaultBriefingTranscriptFails(t *testing.T) {
	boom := errors.New("disk on fire")
	in := briefingInput(baton.ShareConversation, "")
	in.Conversation = func(yield func(transcript.Event, error) bool) {
		if yield(sourceTalk()[1], nil) {
			yield(transcript.Event{}, boom)
		}
	}
	got, err := handoff.DefaultBriefing(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "not included in this briefing: its transcript could not be read: disk on fire") || strings.Contains(got, "trailing commas") {
		t.Fatalf("briefing over a broken transcript:\n%s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in.Conversation = func(yield func(transcript.Event, error) bool) { yield(transcript.Event{}, ctx.Err()) }
	if _, err := handoff.DefaultBriefing(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("DefaultBriefing with a cancelled context = %v", err)
	}
}

// transfer runs one transfer through a Coordinator and the scripted engine:
// a source that talked, then (with a report) a report-only turn that
// submits one and answers; it returns the target's opening prompt.
func transfer(t *testing.T, wsShare, reqShare baton.Share, report bool, opts ...handoff.Option) (string, store.Handoff) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var co *handoff.Coordinator
	eng := enginetest.New(enginetest.Options{Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
		return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
	}})
	t.Cleanup(eng.Close)
	co, err := handoff.NewOn(memstore.New(), engine.Registry{"demo": eng}, session.Options{}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	svc := co.Sessions()
	cfgA, cfgB := baton.EngineConfig{Engine: "demo", Model: "demo-1"}, baton.EngineConfig{Engine: "demo", Model: "demo-2"}
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Mission: "Ship the parser rework.", Root: t.TempDir(), Config: cfgA, Share: wsShare}); err != nil {
		t.Fatal(err)
	}
	eng.Push(enginetest.Script{Reply: "Trailing commas parse now; go test ./... passes."})
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Make the parser accept trailing commas."})
	if err != nil {
		t.Fatal(err)
	}
	if report {
		eng.Push(enginetest.Script{Report: goldenReport, ReportToken: enginetest.RightToken, Reply: "Report submitted; ending my turn."})
	}
	eng.Push(enginetest.Script{})
	h, err := co.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "r1", SourceSession: src.ID, GenerateSummary: report, Target: cfgB, Share: reqShare})
	if err != nil {
		t.Fatal(err)
	}
	if h, err = co.Wait(ctx, "ws", h.ID); err != nil || h.State != store.StateCompleted {
		t.Fatalf("Wait = %+v, %v", h, err)
	}
	ls := eng.Launches()
	target := ls[len(ls)-1].Req
	if target.Session != h.TargetSession {
		t.Fatalf("last launch is not the target: %+v", target)
	}
	return target.Prompt, h
}

// The default briefing of a real transfer replays the source's
// conversation from its engine's transcript, with the report in its own
// section and neither the report prompt nor the answer to it.
func TestTransferBriefsTheSourceConversation(t *testing.T) {
	for _, report := range []bool{false, true} {
		prompt, h := transfer(t, "", "", report)
		if h.Share != baton.ShareConversation {
			t.Errorf("handoff share = %q; want the default, conversation", h.Share)
		}
		has := []string{"User:\n> Make the parser accept trailing commas.", "Agent:\n> Trailing commas parse now; go test ./... passes."}
		if report {
			has = append(has, goldenReport)
		}
		for _, s := range has {
			if !strings.Contains(prompt, s) {
				t.Errorf("report %v: the target's prompt lacks %q:\n%s", report, s, prompt)
			}
		}
		for _, s := range []string{"Nothing was exchanged", "not included", "Do not continue the work", "submit_session_handoff", "Report submitted"} {
			if strings.Contains(prompt, s) {
				t.Errorf("report %v: the target's prompt has %q:\n%s", report, s, prompt)
			}
		}
	}
}

// What leaves the machine is the user's choice: the workspace's setting,
// overridden by the request, both kept on the handoff.
func TestTransferShare(t *testing.T) {
	for _, tc := range []struct {
		ws, req, want        baton.Share
		conversation, report bool
	}{
		{"", "", baton.ShareConversation, true, true},
		{baton.ShareReport, "", baton.ShareReport, false, true},
		{baton.ShareNone, "", baton.ShareNone, false, false},
		{baton.ShareNone, baton.ShareConversation, baton.ShareConversation, true, true},
		{baton.ShareConversation, baton.ShareReport, baton.ShareReport, false, true},
		{baton.ShareConversation, baton.ShareNone, baton.ShareNone, false, false},
	} {
		prompt, h := transfer(t, tc.ws, tc.req, true, handoff.WithBriefing(handoff.Briefing{HistoryTool: "read_source_history"}))
		if h.Share != tc.want {
			t.Errorf("workspace %q, request %q: handoff share %q; want %q", tc.ws, tc.req, h.Share, tc.want)
		}
		if got := strings.Contains(prompt, "Trailing commas parse now"); got != tc.conversation {
			t.Errorf("share %q: the conversation is in the briefing: %v", tc.want, got)
		}
		if got := strings.Contains(prompt, goldenReport); got != tc.report {
			t.Errorf("share %q: the report is in the briefing: %v", tc.want, got)
		}
		if !tc.conversation && (!strings.Contains(prompt, "the user chose not to share it") || strings.Contains(prompt, "read_source_history")) {
			t.Errorf("share %q: the briefing does not say the conversation was withheld, or points at the history tool:\n%s", tc.want, prompt)
		}
	}
}

func TestRequestShareIsValidatedAndFingerprinted(t *testing.T) {
	r := handoff.Request{Workspace: "ws", RequestID: "r", Target: baton.EngineConfig{Engine: "demo"}}
	fp := handoff.Fingerprint(r)
	r.Share = baton.ShareConversation
	if handoff.Fingerprint(r) == fp {
		t.Error("the share is not part of the fingerprint")
	}
	withReport := r
	withReport.Share = " report "
	r.Share = baton.ShareReport
	if handoff.Fingerprint(withReport) != handoff.Fingerprint(r) {
		t.Error("the share's white space changes the fingerprint")
	}
	eng := enginetest.New(enginetest.Options{})
	t.Cleanup(eng.Close)
	co, err := handoff.NewOn(memstore.New(), engine.Registry{"demo": eng}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	ctx := context.Background()
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws", Config: baton.EngineConfig{Engine: "demo"}}); err != nil {
		t.Fatal(err)
	}
	r.Share = "everything"
	if _, err := co.Create(ctx, r); !errors.Is(err, handoff.ErrInvalidRequest) || !errors.Is(err, baton.ErrInvalid) {
		t.Fatalf("Create with share %q = %v; want EINVALID", r.Share, err)
	}
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws2", Config: baton.EngineConfig{Engine: "demo"}, Share: "all"}); !errors.Is(err, baton.ErrInvalid) {
		t.Fatalf("CreateWorkspace with share %q = %v; want EINVALID", "all", err)
	}
	w, err := co.Sessions().SetShare(ctx, "ws", baton.ShareNone)
	if err != nil || w.Share != baton.ShareNone {
		t.Fatalf("SetShare = %+v, %v", w, err)
	}
	if _, err := co.Sessions().SetShare(ctx, "ws", "bogus"); !errors.Is(err, baton.ErrInvalid) {
		t.Fatalf("SetShare(bogus) = %v; want EINVALID", err)
	}
	if w, _ := co.Sessions().Workspace(ctx, "ws"); w.Share != baton.ShareNone {
		t.Fatalf("stored share = %q", w.Share)
	}
}
