package handoff_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Two coordinators share a store. While the first drives a transfer and
// renews its lease, the second's Reconcile leaves it alone; once the first
// dies and its lease lapses, the second interrupts it, launching nothing.
func TestReconcileRespectsLiveLeases(t *testing.T) {
	const ttl = 30 * time.Second
	f := newFixtureAs(t, "node-a", handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}))
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)

	b, err := handoff.NewOn(f.st, engine.Registry{"demo": f.eng}, session.Options{Clock: f.clk, InstanceID: "node-b"}, handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })

	got, err := b.Reconcile(f.ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("reconcile under a live lease = %+v, %v", got, err)
	}
	// Time passes; node-a renews (its renewal timer fires every ttl/3).
	before := f.leaseExpiry()
	f.clk.Advance(ttl / 3)
	f.waitLease(func(exp time.Time) bool { return exp.After(before) })
	if got, _ := b.Reconcile(f.ctx); len(got) != 0 {
		t.Fatalf("reconcile after a renewal = %+v", got)
	}
	if cur, _ := f.co.Get(f.ctx, f.ws, h.ID); cur.State != store.StateStarting {
		t.Fatalf("state = %s, want starting", cur.State)
	}

	// node-a dies: no graceful transition, no more renewals.
	dead, cancel := context.WithCancel(f.ctx)
	cancel()
	_ = f.co.Shutdown(dead)
	f.eng.CrashAll()
	launches := len(f.eng.Launches())
	f.clk.Advance(ttl + time.Second)
	got, err = b.Reconcile(f.ctx)
	if err != nil || len(got) != 1 || got[0].State != store.StateInterrupted {
		t.Fatalf("reconcile after the lease lapsed = %+v, %v", got, err)
	}
	if n := len(f.eng.Launches()); n != launches {
		t.Fatalf("reconcile launched %d processes", n-launches)
	}
}

func (f *fixture) leaseExpiry() time.Time {
	f.t.Helper()
	var r store.Reservation
	err := f.st.View(f.ctx, func(tx store.Tx) (err error) { r, err = tx.GetReservation(f.ws); return err })
	if err != nil {
		f.t.Fatal(err)
	}
	return r.LeaseExpires
}

func (f *fixture) waitLease(ok func(time.Time) bool) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(f.leaseExpiry()) {
		if time.Now().After(deadline) {
			f.t.Fatalf("lease not renewed: expires %v", f.leaseExpiry())
		}
		time.Sleep(time.Millisecond)
	}
}

// A Coordinator's own Reconcile, run periodically as hosts on a shared
// store do, leaves the transfers it drives, or keeps for a decision, alone:
// it neither interrupts them nor stops what they launched.
func TestReconcileLeavesOwnTransfers(t *testing.T) {
	f := newFixtureAs(t, "node-a")
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)
	for range 2 {
		got, err := f.co.Reconcile(f.ctx)
		if err != nil || len(got) != 0 {
			t.Fatalf("reconcile of its own transfer = %+v, %v", got, err)
		}
	}
	if cur, _ := f.co.Get(f.ctx, f.ws, h.ID); cur.State != store.StateStarting {
		t.Fatalf("state = %s, want starting", cur.State)
	}
	if n := f.eng.Running(f.ws); n != 1 {
		t.Fatalf("%d processes run, want the target", n)
	}
}
