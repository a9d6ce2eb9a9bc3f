package handoff

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// A background stop (the follower of a transfer, or the renewal loop) that
// read the handoff while its stop was requested, and claims the stop only
// once a Stop call here has carried the request out, must not carry it out
// again: that halted the workspace a second time and settled the transfer
// again (a second CancelUnconfirmed, seen by the harness as a step that
// should change nothing changing the store).
func TestBackgroundStopOfAnAnsweredRequestDoesNothing(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	eng := enginetest.New(enginetest.Options{Clock: clk})
	t.Cleanup(eng.Close)
	st := memstore.New()
	co, err := NewOn(st, engine.Registry{"demo": eng}, session.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.CrashAll() // the target never confirms a stop: end it for Shutdown
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = co.Shutdown(ctx)
	})
	ctx := context.Background()
	// The target never confirms a stop.
	ws, h, target := heldTransfer(t, co, eng, engine.Timeout)
	if out, err := co.Stop(ctx, ws); err != nil || out != engine.Timeout {
		t.Fatalf("Stop: %v, %v; want an unconfirmed stop", out, err)
	}
	seq := func() int64 {
		var n int64
		if err := st.View(ctx, func(tx store.Tx) (err error) { n, err = tx.LastSeq(ws); return err }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before, stops := seq(), target.StopCalls()

	// The follower that read the row while the stop was requested claims
	// it now, after the Stop call released it.
	co.serveStop(h.ID, false, time.Time{})
	waitStopEnded(t, co, h.ID)
	if got := target.StopCalls(); got != stops {
		t.Errorf("the target was stopped %d more times after its stop was answered", got-stops)
	}
	if after := seq(); after != before {
		t.Errorf("the workspace changed %d more times after its stop was answered", after-before)
	}

	// A second Stop that found the request recorded (it writes nothing)
	// and claims the stop once the first has answered it gets that answer,
	// and carries nothing out again.
	if !co.claimStop(h.ID) {
		t.Fatal("the stop is still claimed")
	}
	got, out, err := co.finishStop(ctx, h.ID)
	co.releaseStop(h.ID)
	if err != nil || out != engine.Timeout || got.State != store.StateFailed {
		t.Errorf("finishStop of an answered request: %s, %v, %v; want failed, timeout (the answer it got)", got.State, out, err)
	}
	if got := target.StopCalls(); got != stops {
		t.Errorf("the target was stopped %d more times by a Stop whose request was answered", got-stops)
	}
	if after := seq(); after != before {
		t.Errorf("the workspace changed %d more times by a Stop whose request was answered", after-before)
	}
}

// The same late claim, after a confirmed Stop cancelled the transfer and a
// new transfer's target was launched and holds its readiness: the late
// background stop halted the workspace, so the new target was stopped, and
// its driver took the stop's exit for a first turn that ended cleanly before
// readiness: the new transfer completed with its target stopped (the
// harness's "completed, model starting").
func TestBackgroundStopOfACancelledTransferLeavesTheNextAlone(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	eng := enginetest.New(enginetest.Options{Clock: clk})
	t.Cleanup(eng.Close)
	st := memstore.New()
	co, err := NewOn(st, engine.Registry{"demo": eng}, session.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = co.Shutdown(ctx)
	})
	ctx := context.Background()
	const ws = baton.WorkspaceID("ws-1")
	cfgA, cfgB := baton.EngineConfig{Engine: "demo", Model: "demo-1"}, baton.EngineConfig{Engine: "demo", Model: "demo-2"}
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: ws, Name: "demo", Root: t.TempDir(), Config: cfgA}); err != nil {
		t.Fatal(err)
	}
	// The source, then two targets that hold their readiness.
	eng.Push(enginetest.Script{}, enginetest.Script{Ready: enginetest.ReadyHold}, enginetest.Script{Ready: enginetest.ReadyHold})
	src, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := co.Create(ctx, Request{Workspace: ws, RequestID: "r1", SourceSession: src.ID, Target: cfgB})
	if err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := eng.WaitLaunches(lctx, 2); err != nil { // the first target holds
		t.Fatal(err)
	}
	if _, err := co.Stop(ctx, ws); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	waitState(t, co, ws, first.ID, store.StateCancelled)
	restored, err := co.Sessions().Current(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	second, err := co.Create(ctx, Request{Workspace: ws, RequestID: "r2", SourceSession: restored.ID, Target: cfgB})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := eng.WaitLaunches(lctx, 3)
	if err != nil {
		g, _ := co.Get(ctx, ws, second.ID)
		t.Fatalf("%v: %+v", err, g)
	}
	target := ls[2].Proc
	waitState(t, co, ws, second.ID, store.StateStarting)

	// The follower of the first transfer, which read its row while its
	// stop was requested, claims that stop only now.
	co.serveStop(first.ID, false, time.Time{})
	waitStopEnded(t, co, first.ID)
	if got := target.StopCalls(); got != 0 {
		t.Errorf("the second transfer's target was stopped %d times by the first's answered stop", got)
	}
	got, err := co.Get(ctx, ws, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != store.StateStarting {
		t.Errorf("second transfer: state %s (error %q), want starting (its target holds)", got.State, got.Error)
	}
}

// heldTransfer creates workspace ws-1 in co, starts its source (which
// confirms readiness at once) and creates a transfer whose target holds
// its readiness and answers a stop with stop; it returns once the
// transfer is starting.
func heldTransfer(t *testing.T, co *Coordinator, eng *enginetest.Engine, stop engine.StopOutcome) (baton.WorkspaceID, store.Handoff, *enginetest.Process) {
	t.Helper()
	ctx := context.Background()
	const ws = baton.WorkspaceID("ws-1")
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: ws, Name: "demo", Root: t.TempDir(), Config: baton.EngineConfig{Engine: "demo", Model: "demo-1"}}); err != nil {
		t.Fatal(err)
	}
	eng.Push(enginetest.Script{}, enginetest.Script{Ready: enginetest.ReadyHold, StopOutcome: stop})
	src, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := co.Create(ctx, Request{Workspace: ws, RequestID: "r1", SourceSession: src.ID, Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}})
	if err != nil {
		t.Fatal(err)
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ls, err := eng.WaitLaunches(lctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, co, ws, h.ID, store.StateStarting)
	return ws, h, ls[1].Proc
}

// waitState polls (bounded) until handoff id is in state want.
func waitState(t *testing.T, co *Coordinator, ws baton.WorkspaceID, id baton.HandoffID, want store.HandoffState) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		got, err := co.Get(context.Background(), ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("handoff %s: state %s (error %q), want %s", id, got.State, got.Error, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitStopEnded polls (bounded) until no stop of handoff id is being
// carried out in co.
func waitStopEnded(t *testing.T, co *Coordinator, id baton.HandoffID) {
	t.Helper()
	waitClaim(t, co, id, "the background stop never ended", func(held, _ bool) bool { return !held })
}

// waitClaim polls (bounded) until ok holds of the claim on handoff id's
// stop in co: whether it is held, and whether another claim was refused
// meanwhile (see claimStop).
func waitClaim(t *testing.T, co *Coordinator, id baton.HandoffID, what string, ok func(held, refused bool) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		co.mu.Lock()
		refused, held := co.stopping[id]
		co.mu.Unlock()
		if ok(held, refused) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A stop requested again, through another process, once the last one was
// carried out unconfirmed: the driving process's follower learns of it at
// once, but the background stop that carried out the last request may not
// have released its claim yet. The follower's claim is refused; the
// request must still be carried out when the claim is released, not left
// to the next lease renewal (the requesting process waits meanwhile).
func TestStopRequestedAgainWhileTheLastStopIsReleasing(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	eng := enginetest.New(enginetest.Options{Clock: clk})
	t.Cleanup(eng.Close)
	st := memstore.New()
	reg := engine.Registry{"demo": eng}
	a, err := NewOn(st, reg, session.Options{Clock: clk, InstanceID: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewOn(st, reg, session.Options{Clock: clk, InstanceID: "node-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.CrashAll()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Shutdown(ctx)
		_ = a.Shutdown(ctx)
	})
	ctx := context.Background()
	// The target does not confirm its first stop.
	ws, h, target := heldTransfer(t, a, eng, engine.Failed)
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := b.Stop(lctx, ws); err != nil || out != engine.Timeout {
		t.Fatalf("first Stop through node b: %v, %v; want an unconfirmed stop (timeout)", out, err)
	}
	waitStopEnded(t, a, h.ID)

	// The background stop that answered the first request still holds its
	// claim when the second request arrives.
	if !a.claimStop(h.ID) {
		t.Fatal("the stop is still claimed")
	}
	target.SetStopOutcome(engine.Stopped)
	type answer struct {
		out engine.StopOutcome
		err error
	}
	done := make(chan answer, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, err := b.Stop(sctx, ws)
		done <- answer{out, err}
	}()
	waitClaim(t, a, h.ID, "node a's follower never tried to carry out the second request", func(_, refused bool) bool { return refused })
	a.releaseStop(h.ID)
	got := <-done
	if got.err != nil || got.out != engine.Stopped {
		t.Fatalf("second Stop through node b = %s, %v; want stopped (carried out by node a once its claim was released)", got.out, got.err)
	}
	waitState(t, a, ws, h.ID, store.StateCancelled)
}
