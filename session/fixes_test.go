package session_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// An unpinned wakeup follows the implicit-resume rule: when the current
// session has no native id, an older one on the same engine and account is
// resumed rather than the wakeup refused.
func TestFireDueUnpinnedUsesImplicitResume(t *testing.T) {
	f := newFixture(t)
	older := f.insertSession(store.Session{ID: "older", ActivationOrder: 1})
	f.insertSession(store.Session{ID: "newer", ActivationOrder: 2, NativeID: noNativeID})
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: "check", At: f.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.fireDue(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fired{Fired: []baton.WakeupID{w.ID}}, res); d != "" {
		t.Fatalf("FireDue (-want +got):\n%s", d)
	}
	ls := f.launches()
	if len(ls) != 1 || ls[0].Req.NativeID != older.NativeID {
		t.Fatalf("launches = %+v, want a resume of %s", startReqs(ls), older.NativeID)
	}
}

// A wakeup whose delivery is refused before the engine is called (the
// workspace became reserved after the wakeup was picked) goes back to
// pending: deferred, never dropped.
func TestFireDueRefusedDeliveryIsDeferred(t *testing.T) {
	f := newFixture(t)
	f.insertSession(store.Session{ID: "a", ActivationOrder: 1})
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: "check", At: f.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	// Right after FireDue's marking transaction commits, a transfer
	// reserves the workspace: Start is then refused before the engine.
	var once sync.Once
	f.svc = f.newService(afterUpdate{Store: f.st, hook: func() { once.Do(func() { f.reserve("hof_x") }) }})
	res, err := f.fireDue(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fired{Deferred: []baton.WakeupID{w.ID}}, res); d != "" {
		t.Fatalf("FireDue (-want +got):\n%s", d)
	}
	if len(res.Fired) != 0 || len(f.launches()) != 0 {
		t.Fatalf("res = %+v, launches %d", res, len(f.launches()))
	}
	if st := f.wakeupStatus(w.ID); st != store.WakeupPending {
		t.Fatalf("wakeup is %s, want pending again", st)
	}
}

// Reconcile ends rows a crash left running, and the current session is
// chosen again without them.
func TestReconcileEndsRowsLeftRunning(t *testing.T) {
	f := newFixture(t)
	f.insertSession(store.Session{ID: "a", ActivationOrder: 2})
	f.insertSession(store.Session{ID: "stale", ActivationOrder: 1, Status: store.SessionRunning})
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != "stale" {
		t.Fatalf("before: current %s, want the running row", cur.ID)
	}
	rec, err := session.Reconcile(f.ctx, f.svc)
	if err != nil || rec.EndedSessions != 1 {
		t.Fatalf("Reconcile = %+v, %v", rec, err)
	}
	if got := f.session("stale"); got.Status != store.SessionEnded || got.EndReason != "interrupted by a restart" {
		t.Fatalf("stale row = %+v", got)
	}
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != "a" {
		t.Fatalf("after: current %s, want a", cur.ID)
	}
	if rec, err := session.Reconcile(f.ctx, f.svc); err != nil || rec.EndedSessions != 0 {
		t.Fatalf("second Reconcile = %+v, %v", rec, err)
	}
}

// afterUpdate runs hook after every successful Update, in the caller's
// goroutine, before Update returns.
type afterUpdate struct {
	store.Store
	hook func()
}

func (a afterUpdate) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := a.Store.Update(ctx, fn)
	if err == nil {
		a.hook()
	}
	return err
}
