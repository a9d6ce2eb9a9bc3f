package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/store/storetest"
)

// newStore returns a fresh store closed at the end of the test.
func newStore(t *testing.T) store.Store {
	s := memstore.New()
	t.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, newStore)
}

func TestZeroStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s := new(memstore.Store)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// mustSnapshot reads workspaces ws-a and ws-b.
func mustSnapshot(t *testing.T, s store.Store) storetest.Snapshot {
	t.Helper()
	snap, err := storetest.TakeSnapshot(t.Context(), s, "ws-a", "ws-b", "")
	if err != nil {
		t.Fatalf("TakeSnapshot: %v", err)
	}
	return snap
}

func noChange(t *testing.T, what string, before storetest.Snapshot, s store.Store) {
	t.Helper()
	if d := storetest.Diff(before, mustSnapshot(t, s)); d != "" {
		t.Errorf("store changed after %s (-before +after):\n%s", what, d)
	}
}

func TestPanicRollsBack(t *testing.T) {
	s := newStore(t)
	storetest.Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{ID: "ws-a"}) })
	before := mustSnapshot(t, s)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic of fn to go on", r)
			}
		}()
		_ = s.Update(t.Context(), func(tx store.Tx) error {
			_ = tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: "changed"})
			_ = tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping})
			panic("boom")
		})
	}()
	noChange(t, "a panicking Update", before, s)
	// The lock was released: the store still works.
	storetest.Update(t, s, func(tx store.Tx) error {
		return tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping})
	})
}

func TestTxAfterFnReturns(t *testing.T) {
	s := newStore(t)
	var kept []store.Tx
	storetest.Update(t, s, func(tx store.Tx) error { kept = append(kept, tx); return nil })
	storetest.View(t, s, func(tx store.Tx) error { kept = append(kept, tx); return nil })
	before := mustSnapshot(t, s)
	for i, tx := range kept {
		if err := tx.PutWorkspace(store.Workspace{ID: "ws-a"}); !errors.Is(err, store.ErrTxDone) {
			t.Errorf("tx %d: PutWorkspace after fn returned: err = %v, want store.ErrTxDone", i, err)
		}
		if _, err := tx.GetWorkspace("ws-a"); !errors.Is(err, store.ErrTxDone) {
			t.Errorf("tx %d: GetWorkspace after fn returned: err = %v, want store.ErrTxDone", i, err)
		}
		if _, err := tx.DueWakeups(time.Now(), 0); !errors.Is(err, store.ErrTxDone) {
			t.Errorf("tx %d: DueWakeups after fn returned: err = %v, want store.ErrTxDone", i, err)
		}
	}
	noChange(t, "writes through a kept Tx", before, s)
}

func TestNilFunction(t *testing.T) {
	s := memstore.New()
	if err := s.Update(t.Context(), nil); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("Update(nil) = %v, want baton.ErrInvalid", err)
	}
	if err := s.View(t.Context(), nil); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("View(nil) = %v, want baton.ErrInvalid", err)
	}
}

func TestCloseTwice(t *testing.T) {
	s := memstore.New()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); !errors.Is(err, store.ErrClosed) {
		t.Errorf("second Close = %v, want store.ErrClosed", err)
	}
}

func TestTimesStoredInUTC(t *testing.T) {
	s := newStore(t)
	in := time.Now().In(time.FixedZone("X", 3600)) // carries a monotonic reading
	storetest.Update(t, s, func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{ID: "ws-a", CreatedAt: in})
	})
	storetest.View(t, s, func(tx store.Tx) error {
		w, err := tx.GetWorkspace("ws-a")
		if err != nil {
			return err
		}
		got := w.CreatedAt
		if !got.Equal(in) || got.Location() != time.UTC || got != got.Round(0) {
			t.Errorf("stored %v as %v (location %v); want the same instant in UTC without monotonic reading", in, got, got.Location())
		}
		return nil
	})
}

func TestSeqOwnedByStore(t *testing.T) {
	s := newStore(t)
	boom := errors.New("boom")
	var first store.Session
	storetest.Update(t, s, func(tx store.Tx) (err error) {
		first, err = putSession(tx, store.Session{ID: "s-1", Workspace: "ws-a"})
		return err
	})
	// A rolled-back insert gives its number back.
	err := s.Update(t.Context(), func(tx store.Tx) error {
		_ = tx.PutSession(store.Session{ID: "s-x", Workspace: "ws-a"})
		return boom
	})
	if err != boom {
		t.Fatalf("Update = %v, want boom", err)
	}
	storetest.Update(t, s, func(tx store.Tx) error {
		second, err := putSession(tx, store.Session{ID: "s-2", Workspace: "ws-a"})
		if err != nil {
			return err
		}
		if first.Seq != 1 || second.Seq != 2 {
			t.Errorf("Seq = %d, %d; want 1, 2", first.Seq, second.Seq)
		}
		moved := first
		moved.Seq = 99
		return tx.PutSession(moved)
	})
	storetest.View(t, s, func(tx store.Tx) error {
		got, err := tx.GetSession("s-1")
		if err != nil {
			return err
		}
		if got.Seq != first.Seq {
			t.Errorf("Seq after PutSession with Seq 99 = %d, want %d (the store keeps its own)", got.Seq, first.Seq)
		}
		return nil
	})
}

func TestListOrders(t *testing.T) {
	s := newStore(t)
	storetest.Update(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(store.Workspace{ID: "ws-c"}),
			tx.PutWorkspace(store.Workspace{ID: "ws-a"}),
			tx.PutWorkspace(store.Workspace{ID: "ws-b"}),
			tx.PutHandoff(store.Handoff{ID: "h-z", Workspace: "ws-c", RequestID: "r", State: store.StateStarting}),
			tx.PutHandoff(store.Handoff{ID: "h-y", Workspace: "ws-a", RequestID: "r", State: store.StateFailed}),
			tx.PutHandoff(store.Handoff{ID: "h-x", Workspace: "ws-b", RequestID: "r", State: store.StateStopping}),
		)
	})
	storetest.View(t, s, func(tx store.Tx) error {
		ws, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		var wsIDs []baton.WorkspaceID
		for _, w := range ws {
			wsIDs = append(wsIDs, w.ID)
		}
		if d := storetest.Diff([]baton.WorkspaceID{"ws-a", "ws-b", "ws-c"}, wsIDs); d != "" {
			t.Errorf("ListWorkspaces not sorted by ID (-want +got):\n%s", d)
		}
		hs, err := tx.PendingHandoffs("")
		if err != nil {
			return err
		}
		var hIDs []baton.HandoffID
		for _, h := range hs {
			hIDs = append(hIDs, h.ID)
		}
		if d := storetest.Diff([]baton.HandoffID{"h-z", "h-y", "h-x"}, hIDs); d != "" {
			t.Errorf("PendingHandoffs(\"\") not oldest first (-want +got):\n%s", d)
		}
		return nil
	})
}

// BenchmarkUpdate measures the bare store write of a handoff transition:
// one Update that puts one handoff (with one attempt in its History).
// Benchmarks of handoff transitions compare against it.
func BenchmarkUpdate(b *testing.B) {
	s := memstore.New()
	defer s.Close()
	ctx := context.Background()
	h := store.Handoff{
		ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping,
		History:   []store.AttemptRecord{{Attempt: 1, Outcome: store.StateFailed, EndedAt: time.Now()}},
		CreatedAt: time.Now(),
	}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutHandoff(h) }); err != nil {
		b.Fatal(err)
	}
	put := func(tx store.Tx) error { return tx.PutHandoff(h) }
	b.ReportAllocs()
	for b.Loop() {
		h.Attempt++
		if err := s.Update(ctx, put); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkView measures a View that reads one handoff by id.
func BenchmarkView(b *testing.B) {
	s := memstore.New()
	defer s.Close()
	ctx := context.Background()
	h := store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping,
		History: []store.AttemptRecord{{Attempt: 1}}}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutHandoff(h) }); err != nil {
		b.Fatal(err)
	}
	get := func(tx store.Tx) error { _, err := tx.GetHandoff("h-1"); return err }
	b.ReportAllocs()
	for b.Loop() {
		if err := s.View(ctx, get); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSubscribe checks the Notifier side beyond the suite: Close wakes
// every subscriber, and a cancelled subscription hears nothing more.
func TestSubscribe(t *testing.T) {
	s := memstore.New()
	a, cancelA := s.Subscribe("ws-a")
	all, cancelAll := s.Subscribe("")
	defer cancelAll()
	cancelA()
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutInstruction(store.Instruction{ID: "i-1", Workspace: "ws-a"})
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-a:
		t.Error("a cancelled subscription was notified")
	default:
	}
	<-all // notified by the commit (the channel holds it)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-all:
	default:
		t.Error("Close did not wake the subscriber")
	}
}

// putSession puts s and returns it as stored (with the Seq the store gave).
func putSession(tx store.Tx, s store.Session) (store.Session, error) {
	if err := tx.PutSession(s); err != nil {
		return store.Session{}, err
	}
	return tx.GetSession(s.ID)
}
