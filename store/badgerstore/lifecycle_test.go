package badgerstore_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/store/storetest"
)

// seed writes one record of each kind in ws-a: a pending handoff h-1
// (request r-1) holding the slot and the held reservation, session s-1,
// a pending wakeup w-1 and a queued continuation c-1.
func seed(t *testing.T, s store.Store) {
	t.Helper()
	at := time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)
	storetest.Update(t, s, func(tx store.Tx) error {
		return errors.Join(
			tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: "a", CreatedAt: at}),
			tx.PutReservation(store.Reservation{Workspace: "ws-a", Held: true, Handoff: "h-1", Epoch: 3, UpdatedAt: at}),
			tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateGenerating,
				History: []store.AttemptRecord{{Attempt: 1, Outcome: store.StateFailed, EndedAt: at}}, CreatedAt: at}),
			func() error {
				err := tx.PutSession(store.Session{ID: "s-1", Workspace: "ws-a", CreatedAt: at})
				return err
			}(),
			tx.PutWakeup(store.Wakeup{ID: "w-1", Workspace: "ws-a", Session: "s-1", At: at, Status: store.WakeupPending}),
			tx.PutContinuation(store.Continuation{ID: "c-1", Workspace: "ws-a", State: store.ContinuationQueued, CreatedAt: at}),
		)
	})
}

func snapshot(t *testing.T, s store.Store) storetest.Snapshot {
	t.Helper()
	snap, err := storetest.TakeSnapshot(t.Context(), s, "ws-a", "ws-b")
	if err != nil {
		t.Fatalf("TakeSnapshot: %v", err)
	}
	return snap
}

// checkSeeded checks that s holds what seed wrote, with its reservations
// still in force: the pending slot and the request id refuse a second
// handoff, and the session counter goes on.
func checkSeeded(t *testing.T, s store.Store, want storetest.Snapshot) {
	t.Helper()
	if d := storetest.Diff(want, snapshot(t, s)); d != "" {
		t.Errorf("store after reopening (-before +after):\n%s", d)
	}
	err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutHandoff(store.Handoff{ID: "h-2", Workspace: "ws-a", RequestID: "r-2", State: store.StateStopping})
	})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("a second pending handoff after reopening: err = %v, want store.ErrDuplicate (the slot is held)", err)
	}
	err = s.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutHandoff(store.Handoff{ID: "h-3", Workspace: "ws-a", RequestID: "r-1", State: store.StateCompleted})
	})
	if !errors.Is(err, store.ErrDuplicate) {
		t.Errorf("a reused request id after reopening: err = %v, want store.ErrDuplicate", err)
	}
	storetest.Update(t, s, func(tx store.Tx) error {
		r, err := tx.GetReservation("ws-a")
		if err != nil {
			return err
		}
		if !r.Held || r.Handoff != "h-1" || r.Epoch != 3 {
			t.Errorf("reservation after reopening = %+v, want held by h-1 at epoch 3", r)
		}
		got, err := putSession(tx, store.Session{ID: "s-2", Workspace: "ws-a"})
		if err != nil {
			return err
		}
		if got.Seq != 2 {
			t.Errorf("Seq of the second session = %d, want 2 (the counter survives)", got.Seq)
		}
		return nil
	})
}

func TestReopenKeepsEverything(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(syncName(noSync), func(t *testing.T) {
			dir := t.TempDir()
			opts := badgerstore.Options{Small: true, NoSync: noSync}
			s := open(t, dir, opts)
			seed(t, s)
			want := snapshot(t, s)
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			checkSeeded(t, open(t, dir, opts), want)
		})
	}
}

// copyDir copies the files of src into dst as they are now: what a
// process that dies at this moment leaves on disk (the page cache
// included, which survives the process).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, filepath.Base(path)), b, 0o600)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestCrashRecovery opens a copy of a directory taken while its store is
// open, without Close: badger replays its write-ahead log and every
// committed Update is there, with the pending handoff's slot and
// reservation still held.
func TestCrashRecovery(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(syncName(noSync), func(t *testing.T) {
			opts := badgerstore.Options{Small: true, NoSync: noSync}
			src := t.TempDir()
			s := open(t, src, opts)
			seed(t, s)
			want := snapshot(t, s)
			dir := t.TempDir()
			copyDir(t, src, dir)
			checkSeeded(t, open(t, dir, opts), want)
		})
	}
}

func TestLockedDirectory(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, testOptions)
	_, err := badgerstore.Open(dir, testOptions)
	if !errors.Is(err, badgerstore.ErrLocked) || !errors.Is(err, baton.ErrBusy) {
		t.Fatalf("second Open of %s: err = %v, want badgerstore.ErrLocked (baton.ErrBusy.Code)", dir, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	open(t, dir, testOptions) // released by Close
}

func TestFormatChecks(t *testing.T) {
	rawDB := func(t *testing.T, key, value string) string {
		t.Helper()
		dir := t.TempDir()
		db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithMemTableSize(1 << 20).WithValueThreshold(1 << 10))
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(txn *badger.Txn) error { return txn.Set([]byte(key), []byte(value)) })
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"foreign badger database", func(t *testing.T) string { return rawDB(t, "user:1", "alice") }},
		{"another format", func(t *testing.T) string { return rawDB(t, "!badgerstore/format", "2") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			_, err := badgerstore.Open(dir, testOptions)
			if !errors.Is(err, store.ErrFormat) || !errors.Is(err, baton.ErrUnsupported) {
				t.Fatalf("Open: err = %v, want store.ErrFormat", err)
			}
			// The refused Open released the directory.
			db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil).WithMemTableSize(1 << 20).WithValueThreshold(1 << 10))
			if err != nil {
				t.Fatalf("directory still locked after a refused Open: %v", err)
			}
			_ = db.Close()
		})
	}
}

func TestOpenRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
		opts badgerstore.Options
	}{
		{"empty directory name", "", badgerstore.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := badgerstore.Open(tc.dir, tc.opts)
			if !errors.Is(err, baton.ErrInvalid) {
				if s != nil {
					_ = s.Close()
				}
				t.Fatalf("Open: err = %v, want baton.ErrInvalid", err)
			}
		})
	}
}

// TestCloseWaitsForTransactions closes the store while an Update runs:
// Close refuses new transactions at once, but waits for the running one,
// which commits.
func TestCloseWaitsForTransactions(t *testing.T) {
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, testOptions)
	if err != nil {
		t.Fatal(err)
	}
	started, release, updated, closed := make(chan struct{}), make(chan struct{}), make(chan error, 1), make(chan error, 1)
	go func() {
		updated <- s.Update(t.Context(), func(tx store.Tx) error {
			close(started)
			<-release
			return tx.PutWorkspace(store.Workspace{ID: "ws-a"})
		})
	}()
	<-started
	go func() { closed <- s.Close() }()
	eventually(t, "View returns ErrClosed once Close began", func() bool {
		return errors.Is(s.View(t.Context(), func(store.Tx) error { return nil }), store.ErrClosed)
	})
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while an Update ran", err)
	default:
	}
	close(release)
	if err := <-updated; err != nil {
		t.Errorf("the running Update: %v", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	storetest.View(t, open(t, dir, testOptions), func(tx store.Tx) error {
		_, err := tx.GetWorkspace("ws-a")
		return err
	})
}

// TestNoGoroutineOutlivesClose checks that Close stops badger's goroutines
// (compactors, flushers, the cache's): the count returns to where it was.
func TestNoGoroutineOutlivesClose(t *testing.T) {
	for _, small := range []bool{false, true} {
		t.Run(profileName(small), func(t *testing.T) {
			before := runtime.NumGoroutine()
			s, err := badgerstore.Open(t.TempDir(), badgerstore.Options{Small: small})
			if err != nil {
				t.Fatal(err)
			}
			seed(t, s)
			if n := runtime.NumGoroutine(); n <= before {
				t.Fatalf("%d goroutines with an open store, %d before: the test cannot see a leak", n, before)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "goroutines back to their count before Open", func() bool { return runtime.NumGoroutine() <= before })
		})
	}
}

// heapMiB returns the live heap after a full collection.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// TestHeapAfterOpen measures what an open, empty store keeps on the heap
// (go test -v -run HeapAfterOpen prints it) and fails if a profile grows
// far beyond its documented size, as badger's defaults would.
func TestHeapAfterOpen(t *testing.T) {
	for _, tc := range []struct {
		small bool
		max   float64 // MiB; documented: default about 21, small about 1.5
	}{{false, 32}, {true, 6}} {
		t.Run(profileName(tc.small), func(t *testing.T) {
			before := heapMiB()
			s := open(t, t.TempDir(), badgerstore.Options{Small: tc.small})
			got := heapMiB() - before
			t.Logf("heap after Open, profile %s: %.1f MiB", profileName(tc.small), got)
			if got > tc.max {
				t.Errorf("heap after Open with profile %s = %.1f MiB, want at most %.0f", profileName(tc.small), got, tc.max)
			}
			runtime.KeepAlive(s)
		})
	}
}

// eventually polls cond until it holds, failing the test after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
