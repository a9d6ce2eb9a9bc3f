package storetest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/store/storetest"
)

// A backend runs the whole suite in one line, from its own test:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := memstore.New()
//			t.Cleanup(func() { _ = s.Close() })
//			return s
//		})
//	}
//
// Tests of code built on a store use TakeSnapshot and Diff to prove that a
// refused operation changed nothing.
func ExampleTakeSnapshot() {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	_ = s.Update(ctx, func(tx store.Tx) error {
		return tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-1", RequestID: "req-1", State: store.StateStopping})
	})
	before, _ := storetest.TakeSnapshot(ctx, s, "ws-1")

	// The request id is taken: the insert is refused, and the Update that
	// ignores the refusal commits nothing else either.
	err := s.Update(ctx, func(tx store.Tx) error {
		fmt.Println("refused:", errors.Is(tx.PutHandoff(store.Handoff{ID: "h-2", Workspace: "ws-1", RequestID: "req-1"}), store.ErrDuplicate))
		return nil
	})
	after, _ := storetest.TakeSnapshot(ctx, s, "ws-1")
	fmt.Println("update:", err)
	fmt.Println("unchanged:", storetest.Diff(before, after) == "")
	fmt.Println("pending:", after.ByWorkspace["ws-1"].Pending.ID)
	// Output:
	// refused: true
	// update: <nil>
	// unchanged: true
	// pending: h-1
}

// A FaultStore makes a chosen write fail, so that a test can show that the
// code under test reports the failure and leaves the store consistent.
func ExampleFaultStore() {
	ctx := context.Background()
	s := storetest.NewFaultStore(memstore.New())
	defer s.Close()
	s.FailWrite(2, false) // the second write from now fails

	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{ID: "ws-1"}); err != nil {
			return err
		}
		return tx.PutReservation(store.Reservation{Workspace: "ws-1", Held: true, Epoch: 1})
	})
	fmt.Println("injected:", errors.Is(err, storetest.ErrInjected))
	_ = s.View(ctx, func(tx store.Tx) error {
		_, err := tx.GetWorkspace("ws-1")
		fmt.Println("workspace kept:", err == nil)
		return nil
	})
	// Output:
	// injected: true
	// workspace kept: false
}
