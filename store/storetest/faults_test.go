package storetest

import (
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// TestFaultStoreConforms runs the suite through a FaultStore with no fault
// armed: it must be the wrapped store.
func TestFaultStoreConforms(t *testing.T) {
	Run(t, func(t *testing.T) store.Store {
		s := memstore.New()
		t.Cleanup(func() { _ = s.Close() })
		return NewFaultStore(s)
	})
}

func TestFaultStore(t *testing.T) {
	insert := func(id baton.InstructionID) func(store.Tx) error {
		return func(tx store.Tx) error {
			return tx.PutInstruction(instruction("ws-a", id, store.InstructionPending))
		}
	}
	// two writes in one Update; the error of the first is ignored.
	ignoring := func(tx store.Tx) error {
		_ = tx.PutInstruction(instruction("ws-a", "i-x", store.InstructionPending))
		err := tx.PutSession(session("ws-a", "s-x"))
		return err
	}
	tests := []struct {
		name    string
		arm     func(f *FaultStore)
		updates []func(store.Tx) error
		wantErr []bool // per Update: matches ErrInjected
		stored  []baton.InstructionID
	}{
		{"no fault", func(*FaultStore) {}, []func(store.Tx) error{insert("i-1"), insert("i-2")},
			[]bool{false, false}, []baton.InstructionID{"i-1", "i-2"}},
		{"second write", func(f *FaultStore) { f.FailWrite(2, false) }, []func(store.Tx) error{insert("i-1"), insert("i-2"), insert("i-3")},
			[]bool{false, true, false}, []baton.InstructionID{"i-1", "i-3"}},
		{"sticky", func(f *FaultStore) { f.FailWrite(2, true) }, []func(store.Tx) error{insert("i-1"), insert("i-2"), insert("i-3")},
			[]bool{false, true, true}, []baton.InstructionID{"i-1"}},
		{"ignored write error", func(f *FaultStore) { f.FailWrite(1, false) }, []func(store.Tx) error{ignoring, insert("i-2")},
			[]bool{true, false}, []baton.InstructionID{"i-2"}},
		{"commit", func(f *FaultStore) { f.FailCommit(2) }, []func(store.Tx) error{insert("i-1"), insert("i-2"), insert("i-3")},
			[]bool{false, true, false}, []baton.InstructionID{"i-1", "i-3"}},
		{"after commit", func(f *FaultStore) { f.FailAfterCommit(1) }, []func(store.Tx) error{insert("i-1"), insert("i-2")},
			[]bool{true, false}, []baton.InstructionID{"i-1", "i-2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := memstore.New()
			defer inner.Close()
			f := NewFaultStore(inner)
			tc.arm(f)
			for i, u := range tc.updates {
				err := f.Update(t.Context(), u)
				if got := errors.Is(err, ErrInjected); got != tc.wantErr[i] {
					t.Errorf("Update %d: err = %v; injected %v, want %v", i+1, err, got, tc.wantErr[i])
				}
				if err != nil && !errors.Is(err, baton.ErrUnavailable) {
					t.Errorf("Update %d: err = %v, want a baton.ErrUnavailable", i+1, err)
				}
			}
			View(t, inner, func(tx store.Tx) error {
				l, err := tx.ListInstructions("ws-a")
				var ids []baton.InstructionID
				for _, i := range l {
					ids = append(ids, i.ID)
				}
				diff(t, "instructions stored", tc.stored, ids)
				_, serr := tx.GetSession("s-x")
				wantNotFound(t, "GetSession(s-x) written after an ignored failed write", serr)
				return err
			})
		})
	}
}

func TestFaultStoreCountsWrites(t *testing.T) {
	f := NewFaultStore(memstore.New())
	defer f.Close()
	Update(t, f, func(tx store.Tx) error {
		_, _ = tx.GetWorkspace("ws-a") // reads do not count
		return errors.Join(tx.PutWorkspace(workspace("ws-a")), tx.PutReservation(store.Reservation{Workspace: "ws-a"}))
	})
	if n := f.Writes(); n != 2 {
		t.Errorf("Writes() = %d, want 2", n)
	}
	f.FailWrite(2, false) // arming restarts the count: the second write from now fails
	err := f.Update(t.Context(), func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-a")) })
	if err != nil {
		t.Errorf("FailWrite(2) failed the first write after arming: %v", err)
	}
	err = f.Update(t.Context(), func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-a")) })
	if !errors.Is(err, ErrInjected) {
		t.Errorf("FailWrite(2): second write after arming: err = %v, want ErrInjected", err)
	}
	f.Heal()
	f.FailWrite(1, true)
	f.Heal()
	if err := f.Update(t.Context(), func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-a")) }); err != nil {
		t.Errorf("Update after Heal: %v", err)
	}
}
