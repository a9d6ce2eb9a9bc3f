package session_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// scanCounter is a store that counts the ListSessions calls made through
// it.
type scanCounter struct {
	store.Store
	scans atomic.Int64
}

type countingTx struct {
	store.Tx
	c *scanCounter
}

func (t countingTx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	t.c.scans.Add(1)
	return t.Tx.ListSessions(ws)
}

func (c *scanCounter) Update(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Update(ctx, func(tx store.Tx) error { return fn(countingTx{tx, c}) })
}

func (c *scanCounter) View(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.View(ctx, func(tx store.Tx) error { return fn(countingTx{tx, c}) })
}

// TestEndsAndRollbacksDoNotScan: the paths that end a session (Stop's
// Halt, HaltDeferred's End.Record, RecordEnd), Rollback, Activate and
// Recompute find the next current session without reading the
// workspace's sessions, and an implicit resume (an ordinary message, a
// continuation) finds its session without reading them either.
func TestEndsAndRollbacksDoNotScan(t *testing.T) {
	f := newFixture(t)
	cs := &scanCounter{Store: f.st}
	f.st, f.svc = cs, f.newService(cs)

	a := f.start(session.TurnRequest{Fresh: true, Prompt: "one"})
	f.stop(a.ID) // Halt: the end is committed alone
	b := f.start(session.TurnRequest{Fresh: true, Prompt: "two"})
	out, end, err := session.Supervise(f.svc).HaltDeferred(f.ctx, f.ws)
	if err != nil || !out.Confirmed() || end == nil {
		t.Fatalf("HaltDeferred = %v, %v, %v", out, end, err)
	}
	f.update(func(tx store.Tx) error { return end.Record(tx) })
	end.Finish(true)
	if s := f.session(b.ID); s.Status != store.SessionEnded {
		t.Fatalf("after End.Record %s is %s, want ended", b.ID, s.Status)
	}
	c := f.start(session.TurnRequest{Session: a.ID, Prompt: "three"}) // an explicit resume
	f.stop(c.ID)
	session.Supervise(f.svc).RecordEnd(c.ID, "", engine.ExitStatus{Stopped: true})
	f.update(func(tx store.Tx) error {
		if _, err := workspace.Activate(tx, b.ID, f.clk.Now()); err != nil {
			return err
		}
		if err := workspace.Rollback(tx, b.ID, "transfer rolled back", f.clk.Now()); err != nil {
			return err
		}
		return workspace.Recompute(tx, f.ws, f.clk.Now())
	})
	// An ordinary message and a continuation resume implicitly: the head
	// of the ranking (a, activated last) has a native id on the
	// workspace's engine and account.
	d := f.start(session.TurnRequest{Prompt: "four"})
	f.stop(d.ID)
	res, err := f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Prompt: "five", Task: "the task"}, session.Briefing{})
	if err != nil {
		t.Fatalf("Continue: %v", err)
	}
	f.stop(res.Session.ID)
	if d.ID != a.ID || res.Session.ID != a.ID {
		t.Errorf("implicit resumes picked %s and %s, want %s", d.ID, res.Session.ID, a.ID)
	}
	if n := cs.scans.Load(); n != 0 {
		t.Errorf("%d ListSessions calls during ends, rollbacks and activations; want none", n)
	}
	_, cur, _ := f.orders()
	if cur != a.ID {
		t.Errorf("current after b rolled back is %q, want %s (the most recently activated left)", cur, a.ID)
	}
}
