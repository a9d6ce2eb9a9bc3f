package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var atomicityTests = []testCase{
	{"FailedUpdateLeavesNothing", testFailedUpdateLeavesNothing},
	{"FnErrorReturnedAsIs", testFnErrorReturnedAsIs},
	{"ReadYourWrites", testReadYourWrites},
}

// snapshot is TakeSnapshot that fails the test on error.
func snapshot(t *testing.T, s store.Store, ws ...baton.WorkspaceID) Snapshot {
	t.Helper()
	snap, err := TakeSnapshot(t.Context(), s, ws...)
	if err != nil {
		t.Fatalf("TakeSnapshot: %v", err)
	}
	return snap
}

// seed writes one record of every kind in workspace ws: a pending handoff
// h-1 (request r-1), session s-1, pending wakeup w-1, queued continuation
// c-1, live launch l-1, pending instruction i-1 and a held reservation.
// The feed of ws gets one change each for h-1, s-1 and i-1.
func seed(t *testing.T, s store.Store, ws baton.WorkspaceID) {
	t.Helper()
	Update(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(workspace(ws)),
			tx.PutReservation(store.Reservation{Workspace: ws, Held: true, Handoff: "h-1", Epoch: 1, UpdatedAt: at(0)}),
			tx.PutHandoff(handoff(ws, "h-1", "r-1", store.StateStopping)),
			tx.PutSession(session(ws, "s-1")),
			tx.PutWakeup(wakeup(ws, "w-1", "s-1", at(10), store.WakeupPending)),
			tx.PutContinuation(continuation(ws, "c-1", store.ContinuationQueued)),
			tx.PutLaunch(launch(ws, "l-1", live, 1)),
			tx.PutInstruction(instruction(ws, "i-1", store.InstructionPending)),
		)
	})
}

func testFailedUpdateLeavesNothing(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	before := snapshot(t, s, "ws-a", "ws-b")
	boom := errors.New("boom")

	err := s.Update(t.Context(), func(tx store.Tx) error {
		w := workspace("ws-a")
		w.Name, w.ActivationCounter = "renamed", 7
		h1 := handoff("ws-a", "h-1", "r-1", store.StateCompleted)
		s1 := session("ws-a", "s-1")
		s1.Status = store.SessionEnded
		w1 := wakeup("ws-a", "w-1", "s-1", at(10), store.WakeupFired)
		c1 := continuation("ws-a", "c-1", store.ContinuationStarted)
		errs := []error{
			tx.PutWorkspace(workspace("ws-b")),
			tx.PutWorkspace(w),
			tx.PutReservation(store.Reservation{Workspace: "ws-a", Epoch: 2}),
			tx.PutReservation(store.Reservation{Workspace: "ws-b", Held: true, Epoch: 1}),
			tx.PutHandoff(h1), // frees ws-a's pending slot...
			tx.PutHandoff(handoff("ws-a", "h-2", "r-2", store.StateStarting)), // ...which h-2 takes
			tx.PutHandoff(handoff("ws-b", "h-3", "r-3", store.StateGenerating)),
			tx.PutSession(s1),
			tx.PutSession(session("ws-a", "s-2")),
			tx.PutWakeup(w1),
			tx.PutWakeup(wakeup("ws-b", "w-2", "s-2", at(5), store.WakeupPending)),
			tx.PutContinuation(c1),
			tx.PutContinuation(continuation("ws-b", "c-2", store.ContinuationQueued)),
			tx.PutLaunch(launch("ws-a", "l-1", gone, 1)),
			tx.PutLaunch(launch("ws-b", "l-2", live, 2)),
			tx.PutInstruction(instruction("ws-a", "i-1", store.InstructionDelivered)),
			tx.PutInstruction(instruction("ws-b", "i-2", store.InstructionPending)),
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("a write failed, so the test proves nothing: %w", err)
		}
		if p, err := pendingOf(tx, "ws-a"); err != nil || p.ID != "h-2" {
			return fmt.Errorf("inside the Update, PendingHandoffs(ws-a) = %q, %v; want h-2", p.ID, err)
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update returned %v, want fn's error as is", err)
	}

	diff(t, "store after a failed Update", before, snapshot(t, s, "ws-a", "ws-b"))
	View(t, s, func(tx store.Tx) error {
		_, err := tx.GetWorkspace("ws-b")
		wantNotFound(t, "GetWorkspace(ws-b)", err)
		_, err = tx.GetReservation("ws-b")
		wantNotFound(t, "GetReservation(ws-b)", err)
		_, err = tx.GetSession("s-2")
		wantNotFound(t, "GetSession(s-2)", err)
		for _, id := range []baton.HandoffID{"h-2", "h-3"} {
			_, err = tx.GetHandoff(id)
			wantNotFound(t, "GetHandoff("+string(id)+")", err)
		}
		_, err = tx.HandoffByRequest("ws-a", "r-2")
		wantNotFound(t, "HandoffByRequest(ws-a, r-2)", err)
		_, err = pendingOf(tx, "ws-b")
		wantNotFound(t, "PendingHandoffs(ws-b)", err)
		_, err = tx.GetWakeup("w-2")
		wantNotFound(t, "GetWakeup(w-2)", err)
		got, err := tx.ListWakeups("ws-b", "s-2")
		if err != nil || len(got) != 0 {
			t.Errorf("ListWakeups(ws-b, s-2) = %v, %v; want none", got, err)
		}
		_, err = tx.GetContinuation("c-2")
		wantNotFound(t, "GetContinuation(c-2)", err)
		_, err = tx.GetLaunch("l-2")
		wantNotFound(t, "GetLaunch(l-2)", err)
		_, err = tx.GetInstruction("i-2")
		wantNotFound(t, "GetInstruction(i-2)", err)
		return nil
	})

	// The rolled-back writes reserved nothing: h-1 still holds the slot,
	// and once it ends, request id r-2 is free for h-2.
	Update(t, s, func(tx store.Tx) error {
		wantErr(t, "PutHandoff(pending h-2) while h-1 is pending", tx.PutHandoff(handoff("ws-a", "h-2", "r-2", store.StateStarting)), store.ErrDuplicate)
		if err := tx.PutHandoff(handoff("ws-a", "h-1", "r-1", store.StateCompleted)); err != nil {
			return fmt.Errorf("PutHandoff(h-1 completed): %w", err)
		}
		if err := tx.PutHandoff(handoff("ws-a", "h-2", "r-2", store.StateStarting)); err != nil {
			return fmt.Errorf("PutHandoff(h-2) after a rolled-back insert of the same record: %w", err)
		}
		return nil
	})
}

// customError is an error type fn may return; Update must not wrap it.
type customError struct{ code int }

func (e *customError) Error() string { return fmt.Sprintf("custom %d", e.code) }

func testFnErrorReturnedAsIs(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	tests := []struct {
		name string
		err  error
	}{
		{"plain", errors.New("plain")},
		{"custom type", &customError{code: 7}},
		{"store sentinel", store.ErrNotFound},
		{"store error from the Tx", nil}, // filled in by fn: the Tx's own error
		{"wrapped", fmt.Errorf("outer: %w", errors.New("inner"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []struct {
				name string
				run  func(fn func(store.Tx) error) error
			}{
				{"Update", func(fn func(store.Tx) error) error { return s.Update(t.Context(), fn) }},
				{"View", func(fn func(store.Tx) error) error { return s.View(t.Context(), fn) }},
			} {
				want := tc.err
				got := op.run(func(tx store.Tx) error {
					if want == nil {
						_, want = tx.GetHandoff("no-such-handoff")
					}
					return want
				})
				if got != want {
					t.Errorf("%s returned %v (%T), want fn's error %v (%T) as is", op.name, got, got, want, want)
				}
			}
		})
	}
}

// testReadYourWrites checks that every index reflects the transaction's own
// writes before it commits.
func testReadYourWrites(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error {
		if err := tx.PutWorkspace(workspace("ws-a")); err != nil {
			return err
		}
		if _, err := tx.GetWorkspace("ws-a"); err != nil {
			t.Errorf("GetWorkspace after PutWorkspace: %v", err)
		}
		if ws, err := tx.ListWorkspaces(); err != nil || len(ws) != 1 {
			t.Errorf("ListWorkspaces = %v, %v; want ws-a", ws, err)
		}

		h := handoff("ws-a", "h-1", "r-1", store.StateStopping)
		if err := tx.PutHandoff(h); err != nil {
			return err
		}
		if p, err := pendingOf(tx, "ws-a"); err != nil || p.ID != h.ID {
			t.Errorf("PendingHandoffs = %q, %v; want h-1", p.ID, err)
		}
		if p, err := tx.HandoffByRequest("ws-a", "r-1"); err != nil || p.ID != h.ID {
			t.Errorf("HandoffByRequest = %q, %v; want h-1", p.ID, err)
		}
		if l, err := tx.PendingHandoffs(""); err != nil || len(l) != 1 {
			t.Errorf("PendingHandoffs(\"\") = %v, %v; want h-1", l, err)
		}
		h.State = store.StateCompleted
		if err := tx.PutHandoff(h); err != nil {
			return err
		}
		_, err := pendingOf(tx, "ws-a")
		wantNotFound(t, "PendingHandoffs after h-1 completed", err)
		if l, err := tx.PendingHandoffs(""); err != nil || len(l) != 0 {
			t.Errorf("PendingHandoffs(\"\") after h-1 completed = %v, %v; want none", l, err)
		}
		if l, err := tx.ListHandoffs("ws-a"); err != nil || len(l) != 1 || l[0].State != store.StateCompleted {
			t.Errorf("ListHandoffs = %v, %v; want h-1 completed", l, err)
		}

		if err := tx.PutSession(session("ws-a", "s-1")); err != nil {
			return err
		}
		if l, err := tx.ListSessions("ws-a"); err != nil || len(l) != 1 {
			t.Errorf("ListSessions = %v, %v; want s-1", l, err)
		}
		if err := tx.PutWakeup(wakeup("ws-a", "w-1", "s-1", at(1), store.WakeupPending)); err != nil {
			return err
		}
		if l, err := tx.DueWakeups(at(1), 0); err != nil || len(l) != 1 {
			t.Errorf("DueWakeups = %v, %v; want w-1", l, err)
		}
		if l, err := tx.ListWakeups("ws-a", "s-1"); err != nil || len(l) != 1 {
			t.Errorf("ListWakeups(ws-a, s-1) = %v, %v; want w-1", l, err)
		}
		if err := tx.PutContinuation(continuation("ws-a", "c-1", store.ContinuationQueued)); err != nil {
			return err
		}
		if l, err := tx.QueuedContinuations(); err != nil || len(l) != 1 {
			t.Errorf("QueuedContinuations = %v, %v; want c-1", l, err)
		}
		if err := tx.PutReservation(store.Reservation{Workspace: "ws-a", Held: true, Epoch: 1}); err != nil {
			return err
		}
		if r, err := tx.GetReservation("ws-a"); err != nil || r.Epoch != 1 {
			t.Errorf("GetReservation = %+v, %v; want epoch 1", r, err)
		}
		return nil
	})
}
