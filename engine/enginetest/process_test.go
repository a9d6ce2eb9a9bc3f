package enginetest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var errBoom = errors.New("boom")

// outcome is what a test observes of a process that has settled.
type outcome struct {
	Ready   readyResult
	Running bool
	Exit    engine.ExitStatus
}

var cmpOutcome = cmp.Options{cmpopts.EquateErrors()}

func TestReadiness(t *testing.T) {
	at := epoch // the fake clock does not move in these cases
	tests := []struct {
		name   string
		script enginetest.Script
		drive  func(p *enginetest.Process)
		want   outcome
	}{
		{"ok", enginetest.Script{}, nil,
			outcome{readyResult{"native-1", nil}, true, engine.ExitStatus{}}},
		{"ok with scripted id", enginetest.Script{NativeID: "n"}, nil,
			outcome{readyResult{"n", nil}, true, engine.ExitStatus{}}},
		{"reject exits with code 1 by default", enginetest.Script{Ready: enginetest.ReadyReject}, nil,
			outcome{readyResult{"", engine.ErrReadyRejected}, false, engine.ExitStatus{Code: 1, At: at}}},
		{"reject with scripted exit", enginetest.Script{Ready: enginetest.ReadyReject, ExitCode: 3, ExitErr: errBoom}, nil,
			outcome{readyResult{"", engine.ErrReadyRejected}, false, engine.ExitStatus{Code: 3, Err: errBoom, At: at}}},
		{"exit before ready, clean", enginetest.Script{Ready: enginetest.ExitBeforeReady}, nil,
			outcome{readyResult{"", engine.ErrExitedBeforeReady}, false, engine.ExitStatus{NativeID: "native-1", At: at}}},
		{"exit before ready, error", enginetest.Script{Ready: enginetest.ExitBeforeReady, ExitCode: 2, ExitErr: errBoom}, nil,
			outcome{readyResult{"", engine.ErrExitedBeforeReady}, false, engine.ExitStatus{Code: 2, Err: errBoom, At: at}}},
		{"hold, release", enginetest.Script{Ready: enginetest.ReadyHold}, func(p *enginetest.Process) { p.Release("r") },
			outcome{readyResult{"r", nil}, true, engine.ExitStatus{}}},
		{"hold, release default id", enginetest.Script{Ready: enginetest.ReadyHold}, func(p *enginetest.Process) { p.Release("") },
			outcome{readyResult{"native-1", nil}, true, engine.ExitStatus{}}},
		{"hold, reject", enginetest.Script{Ready: enginetest.ReadyHold}, func(p *enginetest.Process) { p.Reject() },
			outcome{readyResult{"", engine.ErrReadyRejected}, false, engine.ExitStatus{Code: 1, At: at}}},
		{"hold, finish", enginetest.Script{Ready: enginetest.ReadyHold}, func(p *enginetest.Process) { p.Finish(0, nil) },
			outcome{readyResult{"", engine.ErrExitedBeforeReady}, false, engine.ExitStatus{NativeID: "native-1", At: at}}},
		{"hold, stop", enginetest.Script{Ready: enginetest.ReadyHold}, func(p *enginetest.Process) { _, _ = p.Stop(context.Background()) },
			outcome{readyResult{"", engine.ErrExitedBeforeReady}, false, engine.ExitStatus{Stopped: true, At: at}}},
		{"hold, unconfirmed stop keeps holding", enginetest.Script{Ready: enginetest.ReadyHold, StopOutcome: engine.Timeout}, func(p *enginetest.Process) {
			_, _ = p.Stop(context.Background())
			p.Release("late")
		}, outcome{readyResult{"late", nil}, true, engine.ExitStatus{}}},
		{"release after ready changes nothing", enginetest.Script{}, func(p *enginetest.Process) { p.Release("other"); p.Reject() },
			outcome{readyResult{"native-1", nil}, true, engine.ExitStatus{}}},
		{"end after ready", enginetest.Script{EndAfterReady: true, ExitCode: 4}, nil,
			outcome{readyResult{"native-1", nil}, false, engine.ExitStatus{Code: 4, At: at}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, enginetest.Options{Default: tt.script})
			p := start(t, e, req("w"))
			if tt.drive != nil {
				tt.drive(p)
			}
			got := outcome{Ready: ready(t, p)}
			if !tt.want.Running {
				waitClosed(t, p.Done(), "Done")
			}
			got.Running, got.Exit = p.Running(), p.Exit()
			if diff := cmp.Diff(tt.want, got, cmpOutcome); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// Ready is stable: asking again answers the same.
			if again := ready(t, p); !cmp.Equal(got.Ready, again, cmpOutcome) {
				t.Errorf("second Ready = %+v, first %+v", again, got.Ready)
			}
			if wantRunning := 0; tt.want.Running {
				wantRunning = 1
				if e.Running("w") != wantRunning {
					t.Errorf("Running = %d, want %d", e.Running("w"), wantRunning)
				}
			} else if e.Running("w") != 0 {
				t.Errorf("Running = %d, want 0", e.Running("w"))
			}
		})
	}
}

func TestReadyDelayRunsOnTheClock(t *testing.T) {
	for _, tt := range []struct {
		name    string
		script  enginetest.Script
		want    readyResult
		running bool
	}{
		{"ok", enginetest.Script{ReadyDelay: 2 * time.Second}, readyResult{"native-1", nil}, true},
		{"reject", enginetest.Script{ReadyDelay: 2 * time.Second, Ready: enginetest.ReadyReject}, readyResult{"", engine.ErrReadyRejected}, false},
		{"exit before ready", enginetest.Script{ReadyDelay: 2 * time.Second, Ready: enginetest.ExitBeforeReady}, readyResult{"", engine.ErrExitedBeforeReady}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, clk := newEngine(t, enginetest.Options{Default: tt.script})
			p := start(t, e, req("w"))
			if clk.Pending() != 1 {
				t.Fatalf("Pending = %d after Start, want 1 (timer armed before Start returns)", clk.Pending())
			}
			clk.Advance(2*time.Second - 1)
			if _, err := p.Ready(cancelled()); !errors.Is(err, context.Canceled) {
				t.Fatalf("Ready before the delay = %v, want it still pending", err)
			}
			clk.Advance(1)
			if got := ready(t, p); !cmp.Equal(tt.want, got, cmpOutcome) {
				t.Errorf("Ready = %+v, want %+v", got, tt.want)
			}
			if !tt.running {
				waitClosed(t, p.Done(), "Done")
				if at := p.Exit().At; !at.Equal(epoch.Add(2 * time.Second)) {
					t.Errorf("Exit().At = %v, want the clock's time at exit", at)
				}
			}
			if p.Running() != tt.running {
				t.Errorf("Running = %v, want %v", p.Running(), tt.running)
			}
		})
	}
}

func TestReleaseBeforeDelayStopsTheTimer(t *testing.T) {
	e, clk := newEngine(t, enginetest.Options{Default: enginetest.Script{ReadyDelay: time.Minute, Ready: enginetest.ReadyReject}})
	p := start(t, e, req("w"))
	p.Release("early")
	if got := ready(t, p); got.ID != "early" || got.Err != nil {
		t.Fatalf("Ready = %+v", got)
	}
	clk.Advance(time.Hour) // the scripted reject must not apply any more
	if !p.Running() {
		t.Error("process exited after an early release")
	}
}

func TestReadyRespectsContext(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{Default: enginetest.Script{Ready: enginetest.ReadyHold}})
	p := start(t, e, req("w"))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Ready(ctx)
		errc <- err
	}()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Ready = %v, want context.Canceled", err)
	}
	if !p.Running() {
		t.Error("a cancelled Ready ended the process")
	}
}

func TestStop(t *testing.T) {
	tests := []struct {
		name     string
		script   enginetest.Script
		set      engine.StopOutcome
		ctx      context.Context
		want     engine.StopOutcome
		wantErr  error
		running  bool
		wantExit engine.ExitStatus
	}{
		{"default confirms", enginetest.Script{}, "", context.Background(), engine.Stopped, nil, false, engine.ExitStatus{Stopped: true, At: epoch}},
		{"scripted timeout", enginetest.Script{StopOutcome: engine.Timeout}, "", context.Background(), engine.Timeout, nil, true, engine.ExitStatus{}},
		{"scripted failed", enginetest.Script{StopOutcome: engine.Failed}, "", context.Background(), engine.Failed, nil, true, engine.ExitStatus{}},
		{"scripted not-running", enginetest.Script{StopOutcome: engine.NotRunning, ExitCode: 5}, "", context.Background(), engine.NotRunning, nil, false, engine.ExitStatus{Code: 5, At: epoch}},
		{"set overrides script", enginetest.Script{StopOutcome: engine.Timeout}, engine.Stopped, context.Background(), engine.Stopped, nil, false, engine.ExitStatus{Stopped: true, At: epoch}},
		{"ctx done", enginetest.Script{}, "", cancelled(), engine.Timeout, context.Canceled, true, engine.ExitStatus{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, enginetest.Options{Default: tt.script})
			p := start(t, e, req("w"))
			if tt.set != "" {
				p.SetStopOutcome(tt.set)
			}
			if want := map[bool]engine.StopOutcome{true: tt.set, false: tt.script.StopOutcome}[tt.set != ""]; want != "" && p.StopOutcome() != want {
				t.Fatalf("StopOutcome = %v before the stop, want %v", p.StopOutcome(), want)
			}
			o, err := p.Stop(tt.ctx)
			if o != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Stop = %v, %v; want %v, %v", o, err, tt.want, tt.wantErr)
			}
			if p.Running() != tt.running || isClosed(p.Done()) == tt.running {
				t.Fatalf("Running = %v, Done closed = %v; want running %v", p.Running(), isClosed(p.Done()), tt.running)
			}
			if diff := cmp.Diff(tt.wantExit, p.Exit(), cmpOutcome); diff != "" {
				t.Errorf("Exit (-want +got):\n%s", diff)
			}
			if !tt.running {
				if o, err := p.Stop(context.Background()); o != engine.NotRunning || err != nil {
					t.Errorf("Stop after exit = %v, %v; want not-running", o, err)
				}
			}
			if p.StopCalls() != 1+btoi(!tt.running) {
				t.Errorf("StopCalls = %d", p.StopCalls())
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestSetStopOutcomeThenConfirm(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{Default: enginetest.Script{StopOutcome: engine.Timeout}})
	p := start(t, e, req("w"))
	for range 3 {
		if o, _ := p.Stop(context.Background()); o != engine.Timeout {
			t.Fatalf("Stop = %v, want timeout", o)
		}
	}
	p.SetStopOutcome("")
	if o, _ := p.Stop(context.Background()); o != engine.Stopped || p.Running() {
		t.Errorf("Stop = %v, running %v; want stopped", o, p.Running())
	}
	if p.StopCalls() != 4 {
		t.Errorf("StopCalls = %d, want 4", p.StopCalls())
	}
}

func TestExitIsStableAndDoneClosedOnce(t *testing.T) {
	e, clk := newEngine(t, enginetest.Options{})
	p := start(t, e, req("w"))
	if p.Exit() != (engine.ExitStatus{}) {
		t.Errorf("Exit before Done = %+v, want zero", p.Exit())
	}
	clk.Advance(time.Minute)
	p.Finish(7, errBoom)
	first := p.Exit()
	clk.Advance(time.Minute)
	// Every later way to end it is a no-op; none may close Done again (a
	// second close would panic).
	p.Finish(0, nil)
	p.Reject()
	_, _ = p.Stop(context.Background())
	e.CrashAll()
	if diff := cmp.Diff(engine.ExitStatus{Code: 7, Err: errBoom, At: epoch.Add(time.Minute)}, p.Exit(), cmpOutcome); diff != "" {
		t.Errorf("Exit (-want +got):\n%s", diff)
	}
	if !cmp.Equal(first, p.Exit(), cmpOutcome) {
		t.Errorf("Exit changed: %+v then %+v", first, p.Exit())
	}
	if got := ready(t, p); got.ID != "native-1" {
		t.Errorf("Ready after exit = %+v, want the id confirmed before", got)
	}
}

func TestStopAndReadyConcurrently(t *testing.T) {
	for i := range 50 {
		e, _ := newEngine(t, enginetest.Options{Default: enginetest.Script{Ready: enginetest.ReadyHold}})
		p := start(t, e, req("w"))
		var wg sync.WaitGroup
		results := make([]readyResult, 4)
		for j := range results {
			wg.Go(func() {
				id, err := p.Ready(ctxBound(t))
				results[j] = readyResult{id, err}
			})
		}
		wg.Go(func() { p.Release("") })
		wg.Go(func() { _, _ = p.Stop(context.Background()) })
		wg.Go(func() { _, _ = p.Stop(context.Background()) })
		wg.Wait()
		// Whichever came first, every Ready caller saw the same answer, and
		// the process is gone.
		for _, r := range results[1:] {
			if !cmp.Equal(results[0], r, cmpOutcome) {
				t.Fatalf("run %d: Ready answers differ: %+v", i, results)
			}
		}
		if r := results[0]; r.Err != nil && !errors.Is(r.Err, engine.ErrExitedBeforeReady) {
			t.Fatalf("run %d: Ready = %+v", i, r)
		}
		if p.Running() || !p.Exit().Stopped || e.Running("w") != 0 {
			t.Fatalf("run %d: running %v exit %+v", i, p.Running(), p.Exit())
		}
	}
}

func TestActivity(t *testing.T) {
	reportOnly, _ := reportReq("w")
	tests := []struct {
		name   string
		script enginetest.Script
		req    engine.StartRequest
		want   bool // Turn while running
	}{
		{"normal turn runs until stopped: idle", enginetest.Script{}, req("w"), false},
		{"normal turn before readiness: idle", enginetest.Script{Ready: enginetest.ReadyHold}, req("w"), false},
		{"end-after-ready turn", enginetest.Script{Ready: enginetest.ReadyHold, EndAfterReady: true}, req("w"), true},
		{"report-only turn", enginetest.Script{Ready: enginetest.ReadyHold}, reportOnly, true},
		{"hanging report-only turn", enginetest.Script{Hang: true}, reportOnly, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _ := newEngine(t, enginetest.Options{Default: tt.script})
			p := start(t, e, tt.req)
			if tt.script.Hang {
				waitClosed(t, p.Reported(), "Reported")
			}
			a := p.Activity()
			if a != (engine.Activity{Turn: tt.want}) {
				t.Errorf("Activity = %+v, want Turn %v", a, tt.want)
			}
			p.SetActivity(engine.Activity{WakeSources: 1, Queued: 2})
			if a := p.Activity(); a.Queued != 2 || a.WakeSources != 1 || a.Turn != tt.want {
				t.Errorf("Activity after SetActivity = %+v", a)
			}
			_, _ = p.Stop(context.Background())
			if a := p.Activity(); a != (engine.Activity{}) {
				t.Errorf("Activity after exit = %+v, want none", a)
			}
		})
	}
}

func TestProcessAccessors(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	s := enginetest.Script{NativeID: "x", ExitCode: 9}
	e.Push(enginetest.Script{}, s)
	start(t, e, req("a"))
	r := req("b")
	r.Prompt = "hello"
	p := start(t, e, r)
	if p.N() != 2 || p.Request().Prompt != "hello" || p.Script() != s {
		t.Errorf("N %d Request %+v Script %+v", p.N(), p.Request(), p.Script())
	}
	ls := e.Launches()
	if ls[1].Proc != p || ls[1].Script != s || ls[1].Req.Prompt != "hello" || ls[1].N != 2 {
		t.Errorf("Launches()[1] = %+v", ls[1])
	}
}
