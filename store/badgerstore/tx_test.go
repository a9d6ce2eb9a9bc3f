package badgerstore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/store/storetest"
)

// TestInvalidWrites checks what badgerstore refuses beyond the empty keys
// of storetest's EmptyKeysInvalid: a Put without an ID (ErrInvalid, not
// ErrNotFound) and a time JSON cannot encode. Refused writes change nothing
// and take no Seq.
func TestInvalidWrites(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	seed(t, s)
	before := snapshot(t, s)
	tests := []struct {
		name  string
		write func(tx store.Tx) error
	}{
		{"PutWorkspace without ID", func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{}) }},
		{"PutSession without ID", func(tx store.Tx) error { return tx.PutSession(store.Session{Workspace: "ws-a"}) }},
		{"PutHandoff without ID", func(tx store.Tx) error { return tx.PutHandoff(store.Handoff{Workspace: "ws-a", RequestID: "r-1"}) }},
		{"PutWakeup without ID", func(tx store.Tx) error { return tx.PutWakeup(store.Wakeup{Workspace: "ws-a"}) }},
		{"PutContinuation without ID", func(tx store.Tx) error { return tx.PutContinuation(store.Continuation{Workspace: "ws-a"}) }},
		{"a time after year 9999", func(tx store.Tx) error {
			return tx.PutWorkspace(store.Workspace{ID: "ws-b", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
		}},
		{"a session with a time after year 9999", func(tx store.Tx) error {
			err := tx.PutSession(store.Session{ID: "s-2", Workspace: "ws-a", CreatedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Update(t, s, func(tx store.Tx) error {
				if err := tc.write(tx); !errors.Is(err, baton.ErrInvalid) {
					t.Errorf("err = %v, want baton.ErrInvalid", err)
				}
				return nil // commit: the refused write must have had no effect
			})
			if d := storetest.Diff(before, snapshot(t, s)); d != "" {
				t.Errorf("store changed (-before +after):\n%s", d)
			}
		})
	}
	// The refused session insert took no Seq.
	storetest.Update(t, s, func(tx store.Tx) error {
		got, err := putSession(tx, store.Session{ID: "s-2", Workspace: "ws-a"})
		if err == nil && got.Seq != 2 {
			t.Errorf("Seq after refused inserts = %d, want 2", got.Seq)
		}
		return err
	})
}

func TestTxAfterFnReturns(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	var kept []store.Tx
	storetest.Update(t, s, func(tx store.Tx) error { kept = append(kept, tx); return nil })
	storetest.View(t, s, func(tx store.Tx) error { kept = append(kept, tx); return nil })
	for i, tx := range kept {
		for name, err := range map[string]error{
			"PutWorkspace": tx.PutWorkspace(store.Workspace{ID: "ws-a"}),
			"GetWorkspace": func() error { _, err := tx.GetWorkspace("ws-a"); return err }(),
			"DueWakeups":   func() error { _, err := tx.DueWakeups(time.Now(), 0); return err }(),
		} {
			if !errors.Is(err, store.ErrTxDone) {
				t.Errorf("tx %d: %s after fn returned: err = %v, want store.ErrTxDone", i, name, err)
			}
		}
	}
	storetest.View(t, s, func(tx store.Tx) error {
		if l, err := tx.ListWorkspaces(); err != nil || len(l) != 0 {
			t.Errorf("ListWorkspaces = %v, %v; want none", l, err)
		}
		return nil
	})
}

func TestNilFunction(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	if err := s.Update(t.Context(), nil); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("Update(nil) = %v, want baton.ErrInvalid", err)
	}
	if err := s.View(t.Context(), nil); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("View(nil) = %v, want baton.ErrInvalid", err)
	}
}

func TestPanicRollsBack(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	seed(t, s)
	before := snapshot(t, s)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic of fn to go on", r)
			}
		}()
		_ = s.Update(t.Context(), func(tx store.Tx) error {
			_ = tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: "changed"})
			_, _ = tx.PendingHandoffs("")
			panic("boom")
		})
	}()
	if d := storetest.Diff(before, snapshot(t, s)); d != "" {
		t.Errorf("store changed by a panicking Update (-before +after):\n%s", d)
	}
	// Nothing is left behind: Close does not wait for the panicked Update.
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestBrokenTransactionDoesNotCommit fills a transaction past badger's
// size limit: the write that fails returns ErrStorage, and the Update
// fails with it even though fn ignores the error and returns nil, because
// the failed write may have left a record without its index entries.
func TestBrokenTransactionDoesNotCommit(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	big := strings.Repeat("x", 8<<10)
	var writeErr error
	err := s.Update(t.Context(), func(tx store.Tx) error {
		for i := 0; writeErr == nil && i < 10000; i++ {
			writeErr = tx.PutWorkspace(store.Workspace{ID: baton.WorkspaceID(fmt.Sprintf("ws-%d", i)), Mission: big})
		}
		return nil
	})
	if !errors.Is(writeErr, badgerstore.ErrStorage) || !errors.Is(writeErr, badger.ErrTxnTooBig) {
		t.Fatalf("the write over the limit: err = %v, want ErrStorage wrapping badger.ErrTxnTooBig", writeErr)
	}
	if !errors.Is(err, badgerstore.ErrStorage) {
		t.Errorf("Update: err = %v, want ErrStorage", err)
	}
	storetest.View(t, s, func(tx store.Tx) error {
		if l, err := tx.ListWorkspaces(); err != nil || len(l) != 0 {
			t.Errorf("ListWorkspaces = %d records, %v; want none", len(l), err)
		}
		return nil
	})
}

func TestTimesStoredInUTC(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	in := time.Now().In(time.FixedZone("X", 3600)) // nanoseconds, a zone and a monotonic reading
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
			t.Errorf("stored %v as %v (location %v); want the same instant, to the nanosecond, in UTC", in, got, got.Location())
		}
		return nil
	})
}

// TestSeqPerWorkspace checks that each workspace numbers its sessions from
// 1, that a rolled-back insert gives its number back, and that Put keeps
// the stored Seq.
func TestSeqPerWorkspace(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	insert := func(id baton.SessionID, ws baton.WorkspaceID) store.Session {
		t.Helper()
		var got store.Session
		storetest.Update(t, s, func(tx store.Tx) (err error) {
			got, err = putSession(tx, store.Session{ID: id, Workspace: ws, Seq: 42})
			return err
		})
		return got
	}
	a1 := insert("s-a1", "ws-a")
	boom := errors.New("boom")
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		_ = tx.PutSession(store.Session{ID: "s-x", Workspace: "ws-a"})
		return boom
	}); err != boom {
		t.Fatalf("Update = %v, want boom", err)
	}
	b1 := insert("s-b1", "ws-b")
	a2 := insert("s-a2", "ws-a")
	if a1.Seq != 1 || b1.Seq != 1 || a2.Seq != 2 {
		t.Errorf("Seq of s-a1, s-b1, s-a2 = %d, %d, %d; want 1, 1, 2", a1.Seq, b1.Seq, a2.Seq)
	}
	a1.Seq, a1.Status = 99, store.SessionRunning
	storetest.Update(t, s, func(tx store.Tx) error { return tx.PutSession(a1) })
	storetest.View(t, s, func(tx store.Tx) error {
		got, err := tx.GetSession("s-a1")
		if err != nil {
			return err
		}
		if got.Seq != 1 || got.Status != store.SessionRunning {
			t.Errorf("s-a1 after PutSession with Seq 99 = Seq %d, status %s; want Seq 1, running", got.Seq, got.Status)
		}
		return nil
	})
}
