package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var errorTests = []testCase{
	{"GettersNotFound", testGettersNotFound},
	{"PutMissing", testPutMissing},
	{"PutExisting", testPutExisting},
	{"EmptyKeysInvalid", testEmptyKeysInvalid},
	{"Closed", testClosed},
	{"DoneContext", testDoneContext},
	{"TxDone", testTxDone},
}

// getters calls every getter of tx with keys nothing is stored under.
func getters(tx store.Tx) map[string]error {
	errs := map[string]error{}
	_, errs["GetWorkspace"] = tx.GetWorkspace("ws-none")
	_, errs["GetSession"] = tx.GetSession("s-none")
	_, errs["GetHandoff"] = tx.GetHandoff("h-none")
	_, errs["HandoffByRequest"] = tx.HandoffByRequest("ws-a", "r-none")
	_, errs["HandoffByRequest(other workspace)"] = tx.HandoffByRequest("ws-none", "r-1")
	_, errs["PendingHandoffs (none listed)"] = pendingOf(tx, "ws-none")
	_, errs["GetReservation"] = tx.GetReservation("ws-none")
	_, errs["GetWakeup"] = tx.GetWakeup("w-none")
	_, errs["GetContinuation"] = tx.GetContinuation("c-none")
	_, errs["GetLaunch"] = tx.GetLaunch("l-none")
	_, errs["GetInstruction"] = tx.GetInstruction("i-none")
	return errs
}

func testGettersNotFound(t *testing.T, s store.Store) {
	check := func(in string) func(store.Tx) error {
		return func(tx store.Tx) error {
			for name, err := range getters(tx) {
				wantNotFound(t, name+" in "+in, err)
			}
			return nil
		}
	}
	View(t, s, check("View of an empty store"))
	seed(t, s, "ws-a")
	Update(t, s, check("Update"))
	View(t, s, check("View"))
}

// testPutMissing checks that a Put of a record nothing is stored under
// inserts it.
func testPutMissing(t *testing.T, s store.Store) {
	seed(t, s, "ws-a") // records exist, under other keys
	h := handoff("ws-b", "h-2", "r-2", store.StateCompleted)
	w := wakeup("ws-a", "w-2", "s-1", at(1), store.WakeupPending)
	c := continuation("ws-a", "c-2", store.ContinuationQueued)
	l := launch("ws-a", "l-2", live, 1)
	i := instruction("ws-a", "i-2", store.InstructionPending)
	Update(t, s, func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(workspace("ws-b")), tx.PutSession(session("ws-a", "s-2")), tx.PutHandoff(h),
			tx.PutWakeup(w), tx.PutContinuation(c), tx.PutLaunch(l), tx.PutInstruction(i))
	})
	View(t, s, func(tx store.Tx) error {
		gotH, err := tx.GetHandoff("h-2")
		diff(t, "GetHandoff after a Put of a new handoff", h, gotH)
		gotW, err2 := tx.GetWakeup("w-2")
		diff(t, "GetWakeup after a Put of a new wakeup", w, gotW)
		gotC, err3 := tx.GetContinuation("c-2")
		diff(t, "GetContinuation after a Put of a new continuation", c, gotC)
		gotL, err4 := tx.GetLaunch("l-2")
		diff(t, "GetLaunch after a Put of a new launch", l, gotL)
		gotI, err5 := tx.GetInstruction("i-2")
		diff(t, "GetInstruction after a Put of a new instruction", i, gotI)
		_, err6 := tx.GetWorkspace("ws-b")
		_, err7 := tx.GetSession("s-2")
		return errors.Join(err, err2, err3, err4, err5, err6, err7)
	})
}

// testPutExisting checks that a Put of a stored id replaces the record,
// which keeps its one place in the lists.
func testPutExisting(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	sess := session("ws-a", "s-1")
	sess.NativeID = "other"
	Update(t, s, func(tx store.Tx) error {
		w := workspace("ws-a")
		w.Name = "other"
		return errors.Join(tx.PutWorkspace(w), tx.PutSession(sess),
			tx.PutWakeup(wakeup("ws-a", "w-1", "", at(99), store.WakeupFired)),
			tx.PutContinuation(continuation("ws-a", "c-1", store.ContinuationRefused)),
			tx.PutLaunch(launch("ws-a", "l-1", gone, 9)),
			tx.PutInstruction(instruction("ws-a", "i-1", store.InstructionCancelled)))
	})
	before := snapshot(t, s, "ws-a")
	// A stored handoff keeps its request id: only the id collides.
	Update(t, s, func(tx store.Tx) error {
		wantErr(t, "PutHandoff changing the request id", tx.PutHandoff(handoff("ws-a", "h-1", "r-other", store.StateCompleted)), baton.ErrInvalid)
		return nil
	})
	diff(t, "store after a refused PutHandoff", before, snapshot(t, s, "ws-a"))
	View(t, s, func(tx store.Tx) error {
		got, err := tx.GetSession("s-1")
		if got.NativeID != "other" {
			t.Errorf("GetSession after a Put of a stored session: NativeID %q, want %q", got.NativeID, "other")
		}
		all, err2 := tx.ListSessions("ws-a")
		if n := len(all); n != 1 {
			t.Errorf("ListSessions after a Put of a stored session: %d sessions, want 1", n)
		}
		_, err3 := tx.HandoffByRequest("ws-a", "r-other")
		wantNotFound(t, "HandoffByRequest(r-other) after a refused Put", err3)
		return errors.Join(err, err2)
	})
}

// testEmptyKeysInvalid checks that every write with an empty key field is
// refused with baton.ErrInvalid and, even when the Update commits, leaves
// the store as it was. A Put without an ID is left out: nothing can be
// stored under it, and a backend may answer store.ErrNotFound instead.
func testEmptyKeysInvalid(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	before := snapshot(t, s, "ws-a", "ws-b")
	tests := []struct {
		name  string
		write func(tx store.Tx) error
	}{
		{"PutWorkspace (new) without ID", func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{}) }},
		{"PutSession (new) without ID", func(tx store.Tx) error { return tx.PutSession(store.Session{Workspace: "ws-a"}) }},
		{"PutSession (new) without Workspace", func(tx store.Tx) error { return tx.PutSession(store.Session{ID: "s-2"}) }},
		{"PutSession without Workspace", func(tx store.Tx) error { return tx.PutSession(store.Session{ID: "s-1"}) }},
		{"PutHandoff (new) without ID", func(tx store.Tx) error {
			return tx.PutHandoff(store.Handoff{Workspace: "ws-b", RequestID: "r", State: store.StateStopping})
		}},
		{"PutHandoff (new) without Workspace", func(tx store.Tx) error {
			return tx.PutHandoff(store.Handoff{ID: "h", RequestID: "r", State: store.StateStopping})
		}},
		{"PutHandoff (new) without RequestID", func(tx store.Tx) error {
			return tx.PutHandoff(store.Handoff{ID: "h", Workspace: "ws-b", State: store.StateStopping})
		}},
		{"PutReservation without Workspace", func(tx store.Tx) error {
			return tx.PutReservation(store.Reservation{Held: true})
		}},
		{"PutWakeup (new) without ID", func(tx store.Tx) error { return tx.PutWakeup(store.Wakeup{Workspace: "ws-a"}) }},
		{"PutWakeup (new) without Workspace", func(tx store.Tx) error { return tx.PutWakeup(store.Wakeup{ID: "w-2"}) }},
		{"PutWakeup without Workspace", func(tx store.Tx) error { return tx.PutWakeup(store.Wakeup{ID: "w-1"}) }},
		{"PutContinuation (new) without ID", func(tx store.Tx) error {
			return tx.PutContinuation(store.Continuation{Workspace: "ws-a"})
		}},
		{"PutContinuation (new) without Workspace", func(tx store.Tx) error {
			return tx.PutContinuation(store.Continuation{ID: "c-2"})
		}},
		{"PutContinuation without Workspace", func(tx store.Tx) error {
			return tx.PutContinuation(store.Continuation{ID: "c-1"})
		}},
		{"PutLaunch (new) without ID", func(tx store.Tx) error {
			return tx.PutLaunch(store.Launch{Workspace: "ws-a"})
		}},
		{"PutLaunch (new) without Workspace", func(tx store.Tx) error { return tx.PutLaunch(store.Launch{ID: "l-2"}) }},
		{"PutLaunch without Workspace", func(tx store.Tx) error { return tx.PutLaunch(store.Launch{ID: "l-1"}) }},
		{"PutInstruction (new) without ID", func(tx store.Tx) error { return tx.PutInstruction(store.Instruction{Workspace: "ws-a"}) }},
		{"PutInstruction (new) without Workspace", func(tx store.Tx) error { return tx.PutInstruction(store.Instruction{ID: "i-2"}) }},
		{"PutInstruction without Workspace", func(tx store.Tx) error { return tx.PutInstruction(store.Instruction{ID: "i-1"}) }},
	}
	for _, tc := range tests {
		Update(t, s, func(tx store.Tx) error {
			wantErr(t, tc.name, tc.write(tx), baton.ErrInvalid)
			return nil // commit: the refused write must have had no effect
		})
		diff(t, "store after "+tc.name, before, snapshot(t, s, "ws-a", "ws-b"))
	}
}

func testClosed(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ran := false
	fn := func(store.Tx) error { ran = true; return nil }
	wantErr(t, "Update after Close", s.Update(t.Context(), fn), store.ErrClosed)
	wantErr(t, "View after Close", s.View(t.Context(), fn), store.ErrClosed)
	if ran {
		t.Error("a function ran in a transaction of a closed store")
	}
	if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close: %v, want nil or store.ErrClosed", err)
	}
}

// testTxDone: a Tx kept past its function answers store.ErrTxDone, on
// every backend, for reads and writes, after Update and after View.
func testTxDone(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name string
		run  func(context.Context, func(store.Tx) error) error
	}{{"Update", s.Update}, {"View", s.View}} {
		var kept store.Tx
		if err := c.run(t.Context(), func(tx store.Tx) error { kept = tx; return nil }); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, err := kept.GetWorkspace("ws-a")
		wantErr(t, c.name+": GetWorkspace after fn returned", err, store.ErrTxDone)
		wantErr(t, c.name+": PutWorkspace after fn returned", kept.PutWorkspace(workspace("ws-a")), store.ErrTxDone)
	}
}

func testDoneContext(t *testing.T, s store.Store) {
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
	defer cancel2()
	for _, c := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"canceled", canceled, context.Canceled}, {"deadline exceeded", expired, context.DeadlineExceeded}} {
		t.Run(c.name, func(t *testing.T) {
			ran := false
			fn := func(tx store.Tx) error {
				ran = true
				return tx.PutWorkspace(workspace("ws-a"))
			}
			wantErr(t, "Update", s.Update(c.ctx, fn), c.want)
			wantErr(t, "View", s.View(c.ctx, fn), c.want)
			if ran {
				t.Error("fn ran under a done context")
			}
			View(t, s, func(tx store.Tx) error {
				_, err := tx.GetWorkspace("ws-a")
				wantNotFound(t, "GetWorkspace after a cancelled Update", err)
				return nil
			})
		})
	}
}
