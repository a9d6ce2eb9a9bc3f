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
	{"InsertExisting", testInsertExisting},
	{"EmptyKeysInvalid", testEmptyKeysInvalid},
	{"Closed", testClosed},
	{"DoneContext", testDoneContext},
}

// getters calls every getter of tx with keys nothing is stored under.
func getters(tx store.Tx) map[string]error {
	errs := map[string]error{}
	_, errs["GetWorkspace"] = tx.GetWorkspace("ws-none")
	_, errs["GetSession"] = tx.GetSession("s-none")
	_, errs["GetHandoff"] = tx.GetHandoff("h-none")
	_, errs["HandoffByRequest"] = tx.HandoffByRequest("ws-a", "r-none")
	_, errs["HandoffByRequest(other workspace)"] = tx.HandoffByRequest("ws-none", "r-1")
	_, errs["PendingHandoff"] = tx.PendingHandoff("ws-none")
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

func testPutMissing(t *testing.T, s store.Store) {
	seed(t, s, "ws-a") // records exist, under other keys
	before := snapshot(t, s, "ws-a", "ws-b")
	Update(t, s, func(tx store.Tx) error {
		for name, err := range map[string]error{
			"PutWorkspace":    tx.PutWorkspace(workspace("ws-b")),
			"PutSession":      tx.PutSession(session("ws-a", "s-2")),
			"PutHandoff":      tx.PutHandoff(handoff("ws-b", "h-2", "r-2", store.StateCompleted)),
			"PutWakeup":       tx.PutWakeup(wakeup("ws-a", "w-2", "s-1", at(1), store.WakeupPending)),
			"PutContinuation": tx.PutContinuation(continuation("ws-a", "c-2", store.ContinuationQueued)),
			"PutLaunch":       tx.PutLaunch(launch("ws-a", "l-2", store.LaunchLive, 1)),
			"PutInstruction":  tx.PutInstruction(instruction("ws-a", "i-2", store.InstructionPending)),
		} {
			wantNotFound(t, name+" of a missing record", err)
		}
		return nil
	})
	diff(t, "store after Puts of missing records", before, snapshot(t, s, "ws-a", "ws-b"))
	View(t, s, func(tx store.Tx) error {
		for name, err := range map[string]error{
			"GetSession(s-2)":      func() error { _, err := tx.GetSession("s-2"); return err }(),
			"GetHandoff(h-2)":      func() error { _, err := tx.GetHandoff("h-2"); return err }(),
			"GetWakeup(w-2)":       func() error { _, err := tx.GetWakeup("w-2"); return err }(),
			"GetContinuation(c-2)": func() error { _, err := tx.GetContinuation("c-2"); return err }(),
			"GetLaunch(l-2)":       func() error { _, err := tx.GetLaunch("l-2"); return err }(),
			"GetInstruction(i-2)":  func() error { _, err := tx.GetInstruction("i-2"); return err }(),
		} {
			wantNotFound(t, name+" after a refused Put", err)
		}
		return nil
	})
}

func testInsertExisting(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	before := snapshot(t, s, "ws-a")
	Update(t, s, func(tx store.Tx) error {
		w := workspace("ws-a")
		w.Name = "other"
		sess := session("ws-a", "s-1")
		sess.NativeID = "other"
		// Same id, nothing else in common: a distinct request id and a
		// terminal state, so only the id collides.
		h := handoff("ws-a", "h-1", "r-other", store.StateCompleted)
		for name, err := range map[string]error{
			"InsertWorkspace":    tx.InsertWorkspace(w),
			"InsertSession":      func() error { _, err := tx.InsertSession(sess); return err }(),
			"InsertHandoff":      tx.InsertHandoff(h),
			"InsertWakeup":       tx.InsertWakeup(wakeup("ws-a", "w-1", "", at(99), store.WakeupFired)),
			"InsertContinuation": tx.InsertContinuation(continuation("ws-a", "c-1", store.ContinuationRefused)),
			"InsertLaunch":       tx.InsertLaunch(launch("ws-a", "l-1", store.LaunchGone, 9)),
			"InsertInstruction":  tx.InsertInstruction(instruction("ws-a", "i-1", store.InstructionCancelled)),
		} {
			wantErr(t, name+" of an existing id", err, store.ErrDuplicate, baton.ErrConflict)
		}
		return nil
	})
	diff(t, "store after Inserts of existing ids", before, snapshot(t, s, "ws-a"))
	View(t, s, func(tx store.Tx) error {
		_, err := tx.HandoffByRequest("ws-a", "r-other")
		wantNotFound(t, "HandoffByRequest(r-other) after a refused insert", err)
		return nil
	})
}

// testEmptyKeysInvalid checks that every write with an empty key field is
// refused with baton.ErrInvalid and, even when the Update commits, leaves
// the store as it was. A Put without an ID is left out: nothing can be
// stored under it, and a backend may answer store.ErrNotFound instead.
func testEmptyKeysInvalid(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	before := snapshot(t, s, "ws-a", "ws-b")
	insertSession := func(sess store.Session) func(tx store.Tx) error {
		return func(tx store.Tx) error { _, err := tx.InsertSession(sess); return err }
	}
	tests := []struct {
		name  string
		write func(tx store.Tx) error
	}{
		{"InsertWorkspace without ID", func(tx store.Tx) error { return tx.InsertWorkspace(store.Workspace{}) }},
		{"InsertSession without ID", insertSession(store.Session{Workspace: "ws-a"})},
		{"InsertSession without Workspace", insertSession(store.Session{ID: "s-2"})},
		{"PutSession without Workspace", func(tx store.Tx) error { return tx.PutSession(store.Session{ID: "s-1"}) }},
		{"InsertHandoff without ID", func(tx store.Tx) error {
			return tx.InsertHandoff(store.Handoff{Workspace: "ws-b", RequestID: "r", State: store.StateStopping})
		}},
		{"InsertHandoff without Workspace", func(tx store.Tx) error {
			return tx.InsertHandoff(store.Handoff{ID: "h", RequestID: "r", State: store.StateStopping})
		}},
		{"InsertHandoff without RequestID", func(tx store.Tx) error {
			return tx.InsertHandoff(store.Handoff{ID: "h", Workspace: "ws-b", State: store.StateStopping})
		}},
		{"PutReservation without Workspace", func(tx store.Tx) error {
			return tx.PutReservation(store.Reservation{Held: true})
		}},
		{"InsertWakeup without ID", func(tx store.Tx) error { return tx.InsertWakeup(store.Wakeup{Workspace: "ws-a"}) }},
		{"InsertWakeup without Workspace", func(tx store.Tx) error { return tx.InsertWakeup(store.Wakeup{ID: "w-2"}) }},
		{"PutWakeup without Workspace", func(tx store.Tx) error { return tx.PutWakeup(store.Wakeup{ID: "w-1"}) }},
		{"InsertContinuation without ID", func(tx store.Tx) error {
			return tx.InsertContinuation(store.Continuation{Workspace: "ws-a"})
		}},
		{"InsertContinuation without Workspace", func(tx store.Tx) error {
			return tx.InsertContinuation(store.Continuation{ID: "c-2"})
		}},
		{"PutContinuation without Workspace", func(tx store.Tx) error {
			return tx.PutContinuation(store.Continuation{ID: "c-1"})
		}},
		{"InsertLaunch without ID", func(tx store.Tx) error {
			return tx.InsertLaunch(store.Launch{Workspace: "ws-a", State: store.LaunchLive})
		}},
		{"InsertLaunch without Workspace", func(tx store.Tx) error { return tx.InsertLaunch(store.Launch{ID: "l-2", State: store.LaunchLive}) }},
		{"PutLaunch without Workspace", func(tx store.Tx) error { return tx.PutLaunch(store.Launch{ID: "l-1", State: store.LaunchLive}) }},
		{"InsertInstruction without ID", func(tx store.Tx) error { return tx.InsertInstruction(store.Instruction{Workspace: "ws-a"}) }},
		{"InsertInstruction without Workspace", func(tx store.Tx) error { return tx.InsertInstruction(store.Instruction{ID: "i-2"}) }},
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
				return tx.InsertWorkspace(workspace("ws-a"))
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
