package handoff_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// failingReaper is the scripted engine whose reaps are not confirmed
// while fail is set.
type failingReaper struct {
	*enginetest.Engine
	mu   sync.Mutex
	fail bool
}

func (r *failingReaper) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	r.mu.Lock()
	fail := r.fail
	r.mu.Unlock()
	if fail {
		return engine.Timeout, errors.New("the process table did not answer")
	}
	return r.Engine.ReapLaunch(ctx, id)
}

// TestRecoverSaysWhatItReaped: a host dies (its Coordinator is abandoned,
// its target still running, as an orphan would) in the middle of a
// transfer. The next host's Recover first cannot confirm the target's
// launch gone: it says so (Held, with the workspace and why), logs it, and
// the workspace stays held. A second Recover kills it and says so
// (Reaped, Outcome engine.Stopped), with an info line naming the workspace and the launch.
func TestRecoverSaysWhatItReaped(t *testing.T) {
	f := newFixtureAs(t, "node-1")
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)
	target := f.eng.Launches()[1]
	if !target.Proc.Running() {
		t.Fatal("the target is not running")
	}

	core, logs := observer.New(zapcore.InfoLevel)
	eng := &failingReaper{Engine: f.eng, fail: true}
	co2, err := handoff.NewOn(f.st, engine.Registry{"demo": eng}, session.Options{Clock: f.clk, InstanceID: "node-1", Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co2.Shutdown(context.Background()) })

	rec, err := co2.Recover(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Reaped) != 0 || len(rec.Held) != 1 {
		t.Fatalf("Recover with a failing reap = %+v; want the target's launch held", rec)
	}
	held := rec.Held[0]
	if held.ID != target.Req.LaunchID || held.Workspace != f.ws || held.Handoff != h.ID || held.Outcome != engine.Timeout || held.Err == nil {
		t.Fatalf("held = %+v; want launch %s of workspace %s, handoff %s, timed out with why", held, target.Req.LaunchID, f.ws, h.ID)
	}
	if !target.Proc.Running() {
		t.Fatal("the failing reap ended the target")
	}
	var live []store.Launch
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(f.ws); return err }); err != nil || len(live) != 1 || live[0].ID != held.ID {
		t.Fatalf("live launches after the failing reap = %+v, %v; want the held one", live, err)
	}
	if _, err := co2.Sessions().Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "go on", Fresh: true}); !errors.Is(err, session.ErrSessionRunning) && !errors.Is(err, session.ErrWorkspaceBusy) {
		t.Fatalf("an ordinary start while a launch is held: %v; want it refused", err)
	}
	if n := countLogs(logs, zapcore.WarnLevel, "launch", string(held.ID), "workspace", string(f.ws)); n != 1 {
		t.Errorf("%d warn lines name the held launch and its workspace; want 1 (one reap):\n%v", n, logs.All())
	}

	eng.mu.Lock()
	eng.fail = false
	eng.mu.Unlock()
	logs.TakeAll()
	rec, err = co2.Recover(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Held) != 0 || len(rec.Reaped) != 1 {
		t.Fatalf("second Recover = %+v; want the target's launch reaped", rec)
	}
	got := rec.Reaped[0]
	if got.ID != target.Req.LaunchID || got.Workspace != f.ws || got.Session != target.Req.Session || got.Outcome != engine.Stopped || got.Err != nil {
		t.Fatalf("reaped = %+v; want launch %s of workspace %s, killed", got, target.Req.LaunchID, f.ws)
	}
	if target.Proc.Running() {
		t.Fatal("Recover said it killed the target, which still runs")
	}
	if n := countLogs(logs, zapcore.InfoLevel, "launch", string(got.ID), "workspace", string(f.ws), "outcome", string(engine.Stopped)); n != 1 {
		t.Errorf("%d info lines name the killed launch and its workspace; want 1:\n%v", n, logs.All())
	}
	if n := countLogs(logs, zapcore.InfoLevel, "launchesKilled", int64(1)); n != 1 {
		t.Errorf("%d info lines total what Recover did; want 1:\n%v", n, logs.All())
	}
	hs, err := co2.List(f.ctx, f.ws)
	if err != nil || len(hs) != 1 || hs[0].State != store.StateInterrupted {
		t.Fatalf("transfer after the reap = %+v, %v; want interrupted", hs, err)
	}
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(f.ws); return err }); err != nil || len(live) != 0 {
		t.Fatalf("live launches after the reap = %+v, %v; want none", live, err)
	}

	// A third run finds nothing left.
	if rec, err = co2.Recover(f.ctx); err != nil || len(rec.Reaped)+len(rec.Held) != 0 {
		t.Fatalf("third Recover = %+v, %v; want nothing reaped", rec, err)
	}
}

// countLogs counts the entries at level whose context holds every
// key/value pair of kv (strings or int64s).
func countLogs(logs *observer.ObservedLogs, level zapcore.Level, kv ...any) int {
	n := 0
	for _, e := range logs.FilterLevelExact(level).All() {
		m := e.ContextMap()
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			if m[kv[i].(string)] != kv[i+1] {
				ok = false
			}
		}
		if ok {
			n++
		}
	}
	return n
}
