//go:build linux

package acp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/transcript"
)

func TestFreshThenResume(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "hello"})
	id, err := p.Ready(ctx)
	if err != nil || !strings.HasPrefix(id, "sess-") {
		t.Fatalf("Ready = %q, %v", id, err)
	}
	if x := waitDone(t, p); !x.Clean() || x.Stopped {
		t.Fatalf("Exit = %+v; want clean", x)
	}
	if a := p.Actual(); a.Version != "1.2.3" || a.Model != "scripted-default" {
		t.Errorf("Actual = %+v", a)
	}
	if got, err := p.Ready(ctx); got != id || err != nil {
		t.Errorf("Ready after the exit = %q, %v", got, err)
	}
	if o, err := p.Stop(ctx); o != engine.NotRunning || err != nil {
		t.Errorf("Stop after the exit = %s, %v", o, err)
	}

	// A resume is a new process that loads the session: its replay is
	// not recorded again.
	if got := turn(t, ctx, e, engine.StartRequest{Mode: engine.Resume, NativeID: id, Prompt: "again"}); got != id {
		t.Fatalf("resume's native id = %q; want %q", got, id)
	}
	if diff := cmp.Diff([]string{"echo: hello", "echo: again"}, replies(t, e, "s1")); diff != "" {
		t.Errorf("agent messages (-want +got):\n%s", diff)
	}
	evs := events(t, e, "s1")
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind.String()+"/"+ev.Speaker.String())
		if ev.Turn != transcript.Normal {
			t.Errorf("event %+v: turn %q", ev, ev.Turn)
		}
	}
	want := []string{"Lifecycle/Speaker(0)", "Message/User", "Message/Agent", "Lifecycle/Speaker(0)"}
	if diff := cmp.Diff(append(want, want...), kinds); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
	if !strings.Contains(evs[4].Text, "resume "+id) {
		t.Errorf("second start = %q; want it to name the resume", evs[4].Text)
	}
}

func TestReadinessFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  []string
		req    engine.StartRequest
		want   []error
		noWant []error
	}{
		{"resume of an unknown session", nil, engine.StartRequest{Mode: engine.Resume, NativeID: "sess-nope", Prompt: "hi"},
			[]error{engine.ErrReadyRejected, engine.ErrSessionMissing}, []error{engine.ErrAuth}},
		{"resume without loadSession", []string{"-noload"}, engine.StartRequest{Mode: engine.Resume, NativeID: "sess-x", Prompt: "hi"},
			[]error{engine.ErrReadyRejected, engine.ErrSessionMissing, engine.ErrUnsupportedConfig}, nil},
		{"authentication required", []string{"-auth"}, engine.StartRequest{Mode: engine.Fresh, Prompt: "hi"},
			[]error{engine.ErrReadyRejected, engine.ErrAuth}, []error{engine.ErrSessionMissing}},
		{"refused turn", nil, engine.StartRequest{Mode: engine.Fresh, Prompt: "refuse"},
			[]error{engine.ErrReadyRejected}, []error{engine.ErrSessionMissing}},
		{"a model the agent cannot set", []string{"-nomodels"}, engine.StartRequest{Mode: engine.Fresh, Prompt: "hi", Config: baton.EngineConfig{Engine: "acp", Model: "m1"}},
			[]error{engine.ErrReadyRejected, engine.ErrUnsupportedConfig}, nil},
		{"a model the agent refuses", nil, engine.StartRequest{Mode: engine.Fresh, Prompt: "hi", Config: baton.EngineConfig{Engine: "acp", Model: "unknown-model"}},
			[]error{engine.ErrReadyRejected}, nil},
		{"a crash before any update", nil, engine.StartRequest{Mode: engine.Fresh, Prompt: "crash-now"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "a crash before any update" {
				t.Skip("covered by TestCrashMidTurn")
			}
			ctx := testCtx(t)
			e, _ := scripted(t, acp.Options{}, tc.flags...)
			p := start(t, ctx, e, tc.req)
			_, err := p.Ready(ctx)
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("Ready = %v; want it to match %v", err, w)
				}
			}
			for _, w := range tc.noWant {
				if errors.Is(err, w) {
					t.Errorf("Ready = %v; want it not to match %v", err, w)
				}
			}
			if x := waitDone(t, p); x.Clean() {
				t.Errorf("Exit = %+v; want an error", x)
			}
		})
	}
}

func TestSilentTurnIsReady(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	if id := turn(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "silent"}); id == "" {
		t.Fatal("no native id")
	}
}

func TestStopMidTurn(t *testing.T) {
	for _, tc := range []struct {
		prompt string
		grace  time.Duration
	}{{"hang", 5 * time.Second}, {"stubborn", 300 * time.Millisecond}} {
		t.Run(tc.prompt, func(t *testing.T) {
			ctx := testCtx(t)
			e, _ := scripted(t, acp.Options{StopGrace: tc.grace})
			launch := newLaunchID("stop")
			p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: tc.prompt, LaunchID: launch})
			if _, err := p.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			if a := activityOf(p); !a.Turn {
				t.Errorf("Activity = %+v; want a turn", a)
			}
			t0 := time.Now()
			if o, err := p.Stop(ctx); o != engine.Stopped || err != nil {
				t.Fatalf("Stop = %s, %v", o, err)
			}
			t.Logf("confirmed stop in %s", time.Since(t0))
			if x := p.Exit(); !x.Stopped || x.Clean() && tc.prompt == "stubborn" {
				t.Errorf("Exit = %+v; want stopped", x)
			}
			if o, err := p.Stop(ctx); o != engine.NotRunning || err != nil {
				t.Errorf("second Stop = %s, %v", o, err)
			}
			if o, err := e.ReapLaunch(ctx, launch); o != engine.NotRunning || err != nil {
				t.Errorf("ReapLaunch after the stop = %s, %v", o, err)
			}
			if a := activityOf(p); a != (engine.Activity{}) {
				t.Errorf("Activity after the stop = %+v", a)
			}
		})
	}
}

func TestStopBeforeReady(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "stall"})
	if o, err := p.Stop(ctx); o != engine.Stopped || err != nil {
		t.Fatalf("Stop = %s, %v", o, err)
	}
	if _, err := p.Ready(ctx); !errors.Is(err, engine.ErrExitedBeforeReady) {
		t.Errorf("Ready = %v; want ErrExitedBeforeReady", err)
	}
}

func TestReadyTimeout(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "stall", ReadyTimeout: 300 * time.Millisecond})
	if _, err := p.Ready(ctx); !errors.Is(err, engine.ErrReadyRejected) {
		t.Fatalf("Ready = %v; want ErrReadyRejected", err)
	}
	if x := waitDone(t, p); !x.Stopped {
		t.Errorf("Exit = %+v; want stopped", x)
	}
}

func TestCrashMidTurn(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "crash"})
	if _, err := p.Ready(ctx); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	x := waitDone(t, p)
	if x.Clean() || x.Stopped || x.Code != 3 || x.Err == nil {
		t.Fatalf("Exit = %+v; want code 3 with an error", x)
	}
	evs := events(t, e, "s1")
	if last := evs[len(evs)-1]; last.Kind != transcript.Lifecycle || !strings.Contains(last.Text, "code 3") {
		t.Errorf("last event = %+v", last)
	}
}

// TestLaunchTreeEnds: a grandchild that left the agent's process group
// is found by the launch's environment entry and killed when the agent
// ends, before Done closes.
func TestLaunchTreeEnds(t *testing.T) {
	ctx := testCtx(t)
	e, dir := scripted(t, acp.Options{})
	turn(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "fork"})
	b, err := os.ReadFile(filepath.Join(dir, "grandchild"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if running(pid) {
		t.Fatalf("grandchild %d still runs after Done", pid)
	}
}

// TestReapLaunch: another engine (a restarted host's) finds and stops a
// launch it did not spawn.
func TestReapLaunch(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	launch := newLaunchID("reap")
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "stubborn", LaunchID: launch})
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	other, _ := scripted(t, acp.Options{StopGrace: 200 * time.Millisecond})
	if o, err := other.ReapLaunch(ctx, launch); o != engine.Stopped || err != nil {
		t.Fatalf("ReapLaunch = %s, %v", o, err)
	}
	if x := waitDone(t, p); x.Clean() {
		t.Errorf("Exit = %+v; want an error", x)
	}
	if o, err := other.ReapLaunch(ctx, launch); o != engine.NotRunning || err != nil {
		t.Errorf("second ReapLaunch = %s, %v", o, err)
	}
	if o, err := other.ReapLaunch(ctx, ""); o != engine.Failed || !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("ReapLaunch(\"\") = %s, %v", o, err)
	}
}

func TestReportOnlyTurn(t *testing.T) {
	ctx := testCtx(t)
	var seen []engine.StartRequest
	e, _ := scripted(t, acp.Options{Launch: func(_ context.Context, req engine.StartRequest) (acp.Launch, error) {
		seen = append(seen, req)
		if req.Turn != transcript.ReportOnly {
			return acp.Launch{}, nil
		}
		return acp.Launch{
			MCPServers: []sdk.McpServer{{Http: &sdk.McpServerHttpInline{Type: "http", Name: "baton", Url: "http://127.0.0.1:1/mcp",
				Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer " + req.Report.Token.Reveal()}}}}},
			Allow: []string{"submit_session_handoff"},
		}, nil
	}})
	id := turn(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "mcp"})
	cred := &engine.ReportCredentials{Workspace: "ws", Handoff: "h1", Attempt: 1, Token: baton.ParseToken("tok-1")}
	for _, prompt := range []string{"mcp", "tool:other:mcp__baton__submit_session_handoff", "tool:edit:Write", "tool:read:Read"} {
		turn(t, ctx, e, engine.StartRequest{Mode: engine.Resume, NativeID: id, Turn: transcript.ReportOnly, Report: cred, Prompt: prompt})
	}
	got := replies(t, e, "s1")
	want := []string{"mcp: ", "mcp: http baton http://127.0.0.1:1/mcp Authorization=Bearer tok-1", "allowed", "rejected", "allowed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replies (-want +got):\n%s", diff)
	}
	var turns []transcript.Turn
	for _, ev := range events(t, e, "s1") {
		turns = append(turns, ev.Turn)
	}
	if n := len(turns); n != 4+4+3*6 || slices.Index(turns, transcript.ReportOnly) != 4 {
		t.Errorf("turns = %v", turns)
	}
	for _, ev := range events(t, e, "s1")[4:] {
		if ev.Turn != transcript.ReportOnly {
			t.Errorf("event %+v of a report-only turn not marked", ev)
		}
	}
}

func TestPermissionModes(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	for _, tc := range []struct{ mode, prompt, want string }{
		{"", "tool:edit:Write", "rejected"},
		{"default", "tool:read:Read", "allowed"},
		{"acceptEdits", "tool:edit:Write", "allowed"},
		{"acceptEdits", "tool:execute:Bash", "rejected"},
		{"plan", "tool:edit:Write", "rejected"},
		{"bypassPermissions", "tool:execute:Bash", "allowed"},
	} {
		sid := baton.SessionID("s-" + tc.mode + "-" + strings.ReplaceAll(tc.prompt, ":", "-"))
		turn(t, ctx, e, engine.StartRequest{Session: sid, Mode: engine.Fresh, Prompt: tc.prompt, Config: baton.EngineConfig{Engine: "acp", PermissionMode: tc.mode}})
		if got := replies(t, e, sid); len(got) != 1 || got[0] != tc.want {
			t.Errorf("mode %q, %s: %v; want %s", tc.mode, tc.prompt, got, tc.want)
		}
	}
}

func TestConfiguration(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{Models: []string{"m1"}})
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "config", Config: baton.EngineConfig{Engine: "acp", Model: "m1", ReasoningEffort: "high", PermissionMode: "acceptEdits"}})
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	waitDone(t, p)
	if got := replies(t, e, "s1"); len(got) != 1 || got[0] != "model=m1 effort=high mode=acceptEdits" {
		t.Errorf("replies = %v", got)
	}
	if a := p.Actual(); a.Model != "m1" {
		t.Errorf("Actual = %+v", a)
	}
	for _, cfg := range []baton.EngineConfig{{Engine: "acp", Model: "m2"}, {Engine: "acp", PermissionMode: "yolo"}} {
		if err := e.Validate(cfg); !errors.Is(err, engine.ErrUnsupportedConfig) {
			t.Errorf("Validate(%+v) = %v", cfg, err)
		}
		if _, err := e.Start(ctx, engine.StartRequest{Config: cfg, Mode: engine.Fresh}); !errors.Is(err, engine.ErrUnsupportedConfig) {
			t.Errorf("Start(%+v) = %v", cfg, err)
		}
	}
	if err := e.Validate(baton.EngineConfig{Engine: "acp", Model: "m1", PermissionMode: "plan"}); err != nil {
		t.Errorf("Validate = %v", err)
	}
}

func TestAdmit(t *testing.T) {
	ctx := testCtx(t)
	e, dir := scripted(t, acp.Options{})
	refused := errors.New("fenced out")
	launch := newLaunchID("admit")
	_, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Mode: engine.Fresh, Prompt: "hi", LaunchID: launch, Config: baton.EngineConfig{Engine: "acp"},
		Admit: func(context.Context) error { return refused }})
	if !errors.Is(err, refused) {
		t.Fatalf("Start = %v; want the admission's error", err)
	}
	if o, err := e.ReapLaunch(ctx, launch); o != engine.NotRunning || err != nil {
		t.Errorf("ReapLaunch after a refused admission = %s, %v", o, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the agent ran: %v", ents)
	}
	admitted := false
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "hi", Admit: func(context.Context) error { admitted = true; return nil }})
	if _, err := p.Ready(ctx); err != nil || !admitted {
		t.Fatalf("Ready = %v, admitted %v", err, admitted)
	}
	waitDone(t, p)
}

func TestStartErrors(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	if _, err := e.Start(ctx, engine.StartRequest{Mode: engine.Resume, Config: baton.EngineConfig{Engine: "acp"}}); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("resume without an id: %v", err)
	}
	if _, err := e.Transcript(ctx, "nobody"); !errors.Is(err, engine.ErrNoTranscript) {
		t.Errorf("Transcript of an unknown session: %v", err)
	}
	if _, err := acp.New(acp.Options{DataDir: t.TempDir()}); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("New without a command: %v", err)
	}
	bad, err := acp.New(acp.Options{Command: filepath.Join(t.TempDir(), "missing"), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Start(ctx, engine.StartRequest{Mode: engine.Fresh, Config: baton.EngineConfig{Engine: "acp"}}); !errors.Is(err, baton.ErrUnavailable) {
		t.Errorf("Start of a missing command: %v", err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Start(ctx, engine.StartRequest{Mode: engine.Fresh, Config: baton.EngineConfig{Engine: "acp"}}); !errors.Is(err, engine.ErrClosed) {
		t.Errorf("Start after Close: %v", err)
	}
}

func TestCloseStopsRunningLaunches(t *testing.T) {
	ctx := testCtx(t)
	e, _ := scripted(t, acp.Options{})
	p := start(t, ctx, e, engine.StartRequest{Mode: engine.Fresh, Prompt: "hang"})
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Close returned with a launch running")
	}
}
