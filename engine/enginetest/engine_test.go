package enginetest_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/transcript"
	"github.com/google/go-cmp/cmp"
)

func TestScriptChoiceOrder(t *testing.T) {
	byModel := func(r engine.StartRequest) (enginetest.Script, bool) {
		if r.Config.Model == "special" {
			return enginetest.Script{NativeID: "from-hook"}, true
		}
		return enginetest.Script{}, false
	}
	e, _ := newEngine(t, enginetest.Options{ScriptFor: byModel, Default: enginetest.Script{NativeID: "default"}})
	e.Push(enginetest.Script{NativeID: "queued-1"}, enginetest.Script{NativeID: "queued-2"})

	special := req("w")
	special.Config.Model = "special"
	var got []string
	for _, r := range []engine.StartRequest{req("w"), special, req("w"), req("w")} {
		got = append(got, ready(t, start(t, e, r)).ID)
	}
	// The hook's start does not consume a queued script.
	if diff := cmp.Diff([]string{"queued-1", "from-hook", "queued-2", "default"}, got); diff != "" {
		t.Errorf("native ids (-want +got):\n%s", diff)
	}
}

func TestNativeIDDefaults(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	resume := req("w")
	resume.Mode, resume.NativeID = engine.Resume, "abc"
	got := []string{
		ready(t, start(t, e, req("w"))).ID,
		ready(t, start(t, e, resume)).ID,
		ready(t, start(t, e, req("w"))).ID,
	}
	if diff := cmp.Diff([]string{"native-1", "abc", "native-3"}, got); diff != "" {
		t.Errorf("native ids (-want +got):\n%s", diff)
	}
}

func TestStartFailuresAreRecordedAndLaunchNothing(t *testing.T) {
	unsupported := baton.Errorf(engine.ErrUnsupportedConfig, "model")
	validate := func(cfg baton.EngineConfig) error {
		if cfg.Model == "nope" {
			return unsupported
		}
		return nil
	}
	badModel := req("w")
	badModel.Config.Model = "nope"
	resumeNoID := req("w")
	resumeNoID.Mode = engine.Resume
	reportNoCred := req("w")
	reportNoCred.Turn = transcript.ReportOnly
	badMode := req("w")
	badMode.Mode = "sideways"
	badTurn := req("w")
	badTurn.Turn = "chat"

	tests := []struct {
		name   string
		ctx    context.Context
		req    engine.StartRequest
		script *enginetest.Script
		want   error
	}{
		{"ctx done", cancelled(), req("w"), nil, context.Canceled},
		{"resume without native id", context.Background(), resumeNoID, nil, enginetest.ErrBadRequest},
		{"report-only without credentials", context.Background(), reportNoCred, nil, enginetest.ErrBadRequest},
		{"unknown mode", context.Background(), badMode, nil, baton.ErrInvalid},
		{"unknown turn", context.Background(), badTurn, nil, baton.ErrInvalid},
		{"validator refuses", context.Background(), badModel, nil, engine.ErrUnsupportedConfig},
		{"scripted StartErr", context.Background(), req("w"), &enginetest.Script{StartErr: engine.ErrAuth}, engine.ErrAuth},
		{"negative delay", context.Background(), req("w"), &enginetest.Script{ReadyDelay: -1}, enginetest.ErrBadScript},
		{"unknown ready behaviour", context.Background(), req("w"), &enginetest.Script{Ready: 99}, enginetest.ErrBadScript},
		{"unknown stop outcome", context.Background(), req("w"), &enginetest.Script{StopOutcome: "maybe"}, enginetest.ErrBadScript},
		{"unknown token choice", context.Background(), req("w"), &enginetest.Script{ReportToken: 7}, enginetest.ErrBadScript},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, enginetest.Options{Validate: validate})
			if tt.script != nil {
				e.Push(*tt.script)
			}
			p, err := e.Start(tt.ctx, tt.req)
			if !errors.Is(err, tt.want) || p != nil {
				t.Fatalf("Start = %v, %v; want nil, %v", p, err, tt.want)
			}
			ls := e.Launches()
			if len(ls) != 1 || !ls[0].Failed || ls[0].Proc != nil || ls[0].Err != err || ls[0].N != 1 {
				t.Fatalf("Launches = %+v, want one failed launch with the error", ls)
			}
			if e.Running("w") != 0 || e.MaxRunning("w") != 0 {
				t.Errorf("Running %d MaxRunning %d, want 0 0", e.Running("w"), e.MaxRunning("w"))
			}
		})
	}
}

func TestStartErrIsReturnedAsIs(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	e.Push(enginetest.Script{StartErr: engine.ErrSessionMissing})
	if _, err := e.Start(context.Background(), req("w")); err != engine.ErrSessionMissing {
		t.Errorf("Start error = %v, want engine.ErrSessionMissing itself", err)
	}
	// The queue moves on: the next start succeeds.
	start(t, e, req("w"))
	ls := e.Launches()
	if diff := cmp.Diff([]bool{true, false}, []bool{ls[0].Failed, ls[1].Failed}); diff != "" {
		t.Errorf("Failed (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	var got []baton.EngineConfig
	e, _ := newEngine(t, enginetest.Options{Validate: func(cfg baton.EngineConfig) error {
		got = append(got, cfg)
		return engine.ErrUnsupportedConfig
	}})
	cfg := baton.EngineConfig{Engine: "demo", Model: "m"}
	if err := e.Validate(cfg); !errors.Is(err, engine.ErrUnsupportedConfig) {
		t.Errorf("Validate = %v", err)
	}
	if diff := cmp.Diff([]baton.EngineConfig{cfg}, got); diff != "" {
		t.Errorf("hook saw (-want +got):\n%s", diff)
	}
	e2, _ := newEngine(t, enginetest.Options{})
	if err := e2.Validate(baton.EngineConfig{}); err != nil {
		t.Errorf("default Validate = %v, want nil", err)
	}
}

func TestRunningAndMaxRunning(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	a1 := start(t, e, req("a"))
	a2 := start(t, e, req("a"))
	b := start(t, e, req("b"))
	check := func(step string, wantA, wantMaxA, wantB int) {
		t.Helper()
		got := []int{e.Running("a"), e.MaxRunning("a"), e.Running("b")}
		if diff := cmp.Diff([]int{wantA, wantMaxA, wantB}, got); diff != "" {
			t.Errorf("%s: [Running(a) MaxRunning(a) Running(b)] (-want +got):\n%s", step, diff)
		}
	}
	check("started", 2, 2, 1)
	a1.SetStopOutcome(engine.Timeout)
	if o, err := a1.Stop(context.Background()); o != engine.Timeout || err != nil {
		t.Fatalf("Stop = %v, %v", o, err)
	}
	check("unconfirmed stop", 2, 2, 1)
	a2.Finish(0, nil)
	check("one finished", 1, 2, 1)
	e.CrashAll()
	check("crashed", 0, 2, 0)
	for _, p := range []*enginetest.Process{a1, a2, b} {
		waitClosed(t, p.Done(), "Done")
	}
	if got := a1.Exit(); !errors.Is(got.Err, enginetest.ErrCrashed) || got.Code != -1 || got.Stopped {
		t.Errorf("crashed Exit = %+v", got)
	}
	if got := a2.Exit(); !got.Clean() {
		t.Errorf("finished Exit = %+v, want clean", got)
	}
}

func TestWaitLaunches(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	got := make(chan []enginetest.Launch)
	go func() {
		ls, err := e.WaitLaunches(ctxBound(t), 2)
		if err != nil {
			t.Error(err)
		}
		got <- ls
	}()
	start(t, e, req("w"))
	_, _ = e.Start(cancelled(), req("w")) // a failed start counts too
	if ls := <-got; len(ls) < 2 || ls[0].Failed || !ls[1].Failed {
		t.Errorf("WaitLaunches = %+v", ls)
	}
	if _, err := e.WaitLaunches(cancelled(), 3); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitLaunches with a done ctx = %v", err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	e, clk := newEngine(t, enginetest.Options{})
	e.Push(enginetest.Script{Ready: enginetest.ReadyHold}, enginetest.Script{ReadyDelay: 1e9}, enginetest.Script{})
	held, delayed, running := start(t, e, req("a")), start(t, e, req("b")), start(t, e, req("c"))
	if clk.Pending() != 1 {
		t.Fatalf("Pending = %d, want the delayed start's timer", clk.Pending())
	}
	e.Close()
	for _, p := range []*enginetest.Process{held, delayed, running} {
		if !isClosed(p.Done()) {
			t.Fatalf("process %d still running after Close", p.N())
		}
		if !errors.Is(p.Exit().Err, enginetest.ErrClosed) {
			t.Errorf("process %d Exit = %+v, want ErrClosed", p.N(), p.Exit())
		}
	}
	if r := ready(t, held); !errors.Is(r.Err, engine.ErrExitedBeforeReady) {
		t.Errorf("held Ready after Close = %+v", r)
	}
	if clk.Pending() != 0 {
		t.Errorf("Pending = %d after Close, want the timer stopped", clk.Pending())
	}
	if _, err := e.Start(context.Background(), req("d")); !errors.Is(err, enginetest.ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
	e.Close() // idempotent
}

// TestNoGoroutineOutlivesClose starts one process of every kind, some
// mid-wait, and checks the goroutine count is back where it was after Close.
func TestNoGoroutineOutlivesClose(t *testing.T) {
	before := runtime.NumGoroutine()
	e, _ := newEngine(t, enginetest.Options{Submit: func(ctx context.Context, _ engine.ReportCredentials, _ string) error { return nil }})
	rr, _ := reportReq("r")
	for _, s := range []enginetest.Script{
		{}, {Ready: enginetest.ReadyHold}, {ReadyDelay: time.Hour}, {Ready: enginetest.ReadyReject},
		{Ready: enginetest.ExitBeforeReady}, {EndAfterReady: true}, {StopOutcome: engine.Timeout},
	} {
		e.Push(s)
		start(t, e, req("w"))
	}
	e.Push(enginetest.Script{Hang: true, Report: "r", ReportToken: enginetest.RightToken})
	start(t, e, rr)
	e.Close()
	deadline := time.Now().Add(bound)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before", runtime.NumGoroutine(), before)
		}
		runtime.Gosched()
	}
}
