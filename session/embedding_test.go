package session_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// A continuation queued while its session was still starting, whose
// session then crashed before readiness, is briefed with that crash.
func TestContinuationQueuedWhileStartingBriefsWithTheCrash(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	started := make(chan error, 1)
	go func() {
		_, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: theTask})
		started <- err
	}()
	ls, err := f.eng.WaitLaunches(f.ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	running := f.waitSession(ls[0].Req.Session, func(s store.Session) bool { return s.Status == store.SessionRunning })
	c := f.queue(store.Continuation{Session: running.ID, Task: theTask, Prompt: "Please continue."})
	if c.Ending != "" {
		t.Fatalf("ending copied from a running session: %q", c.Ending)
	}
	ls[0].Proc.Finish(-1, errors.New("signal: killed"))
	mustIs(t, <-started, engine.ErrExitedBeforeReady)

	res, err := f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Started) != 1 {
		t.Fatalf("RunQueued = %+v, %v", res, err)
	}
	got := res.Started[0].Prompt
	for _, want := range []string{"## How the previous session ended", "signal: killed"} {
		if !strings.Contains(got, want) {
			t.Errorf("opening prompt lacks %q:\n%s", want, got)
		}
	}
	if row := f.continuationRow(c.ID); !strings.Contains(row.Ending, "signal: killed") {
		t.Fatalf("stored ending = %q, want the crash", row.Ending)
	}
}

// A continuation queued while its session was running, whose process was
// then cut off by a restart (its row ended by Reconcile), is briefed with
// that restart.
func TestContinuationQueuedWhileRunningBriefsWithTheRestart(t *testing.T) {
	f := newFixture(t)
	crashed := &crashStore{Store: f.st}
	f.svc = f.newService(crashed)
	s := f.start(session.TurnRequest{Prompt: theTask})
	// A target on another account cannot resume the session: a fresh,
	// briefed one opens.
	c := f.queue(store.Continuation{Session: s.ID, Task: theTask, Prompt: "Please continue.", Target: cfgAlt})
	// A crash: the old Service writes nothing more (its exit watcher
	// would otherwise record the end of the process the new one reaps,
	// before the new one's sweep); a new one reconciles.
	crashed.crash()
	f.svc = f.newService(f.st)
	if rec, err := session.Reconcile(f.ctx, f.svc); err != nil || rec.EndedSessions != 1 {
		t.Fatalf("Reconcile = %+v, %v", rec, err)
	}
	res, err := f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Started) != 1 {
		t.Fatalf("RunQueued = %+v, %v", res, err)
	}
	got := res.Started[0].Prompt
	if !strings.Contains(got, "interrupted by a restart") || !res.Started[0].Briefed {
		t.Fatalf("opening prompt does not say the session was cut off by a restart:\n%s", got)
	}
	if row := f.continuationRow(c.ID); row.Ending != "interrupted by a restart" {
		t.Fatalf("stored ending = %q", row.Ending)
	}
}

// Continue names its previous session and is briefed with its ending.
func TestContinueUsesItsSessionsEnding(t *testing.T) {
	f := newFixture(t)
	killed := f.killedRun()
	_, err := f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Session: "ses_nope", Prompt: "Go on."}, session.Briefing{})
	mustIs(t, err, session.ErrNoSession)
	res, err := f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Session: killed.ID, Task: theTask, Prompt: "Go on."}, session.Briefing{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Prompt, "## How the previous session ended") || !strings.Contains(res.Prompt, "signal: killed") {
		t.Fatalf("opening prompt lacks the ending:\n%s", res.Prompt)
	}
}

// A timer refused at fire time stores why, for the user.
func TestRefusedWakeupSaysWhy(t *testing.T) {
	f := newFixture(t)
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: "check", At: t0})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.fireDue(f.ctx, 0)
	if err != nil || len(res.Refused) != 1 {
		t.Fatalf("FireDue = %+v, %v", res, err)
	}
	all, err := session.List[store.Wakeup](f.ctx, f.svc, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	if all[0].ID != w.ID || all[0].Status != store.WakeupCancelled || !strings.Contains(all[0].Reason, "may only resume") {
		t.Fatalf("wakeup = %+v, want cancelled with a reason", all[0])
	}
}

// slowStop is an engine whose processes answer Stop only when ctx ends,
// until released.
type slowStop struct {
	engine.Engine
	release chan struct{}
}

func (e slowStop) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	p, err := e.Engine.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	return slowProc{Process: p, release: e.release}, nil
}

type slowProc struct {
	engine.Process
	release chan struct{}
}

func (p slowProc) Stop(ctx context.Context) (engine.StopOutcome, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case <-p.release:
		return p.Process.Stop(ctx)
	}
}

// A stop the engine does not confirm within the stop timeout is a
// timeout, measured on the Service's clock.
func TestStopTimesOut(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	svc, err := session.New(f.st, slowStop{Engine: f.eng, release: release}, session.Options{Clock: f.clk, StopTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		close(release)
		if err := svc.Close(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	if _, err := svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		out engine.StopOutcome
		err error
	}
	done := make(chan result, 1)
	timers := f.clk.Pending()
	go func() {
		out, err := svc.Stop(f.ctx, f.ws)
		done <- result{out, err}
	}()
	<-f.clk.WaitTimers(timers + 1)
	f.clk.Advance(10 * time.Second)
	r := <-done
	if r.out != engine.Timeout || r.err == nil || !strings.Contains(r.err.Error(), "10s") {
		t.Fatalf("Stop = %s, %v; want a timeout after 10s", r.out, r.err)
	}
	if id, ok := svc.Running(f.ws); !ok {
		t.Fatalf("the process must still count as running (%s)", id)
	}
}

// crashStore is a store whose writes, once crash is called, vanish
// without an error, as those of a process that died before committing.
type crashStore struct {
	store.Store
	down atomic.Bool
}

func (c *crashStore) crash() { c.down.Store(true) }

func (c *crashStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if c.down.Load() {
		return nil
	}
	return c.Store.Update(ctx, fn)
}
