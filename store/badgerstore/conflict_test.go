package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/store/storetest"
)

// increment adds one to the ActivationCounter of ws-a.
func increment(tx store.Tx) error {
	w, err := tx.GetWorkspace("ws-a")
	if err != nil {
		return err
	}
	w.ActivationCounter++
	return tx.PutWorkspace(w)
}

func counter(t *testing.T, s store.Store) int64 {
	t.Helper()
	var n int64
	storetest.View(t, s, func(tx store.Tx) error {
		w, err := tx.GetWorkspace("ws-a")
		n = w.ActivationCounter
		return err
	})
	return n
}

func newCounterStore(t *testing.T, opts badgerstore.Options) *badgerstore.Store {
	t.Helper()
	s := open(t, t.TempDir(), opts)
	storetest.Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{ID: "ws-a"}) })
	return s
}

// interfering returns an increment that, on each of its first n runs,
// lets another Update increment the counter after it read it: its commit
// then conflicts.
func interfering(t *testing.T, s store.Store, n int, calls *int) func(store.Tx) error {
	return func(tx store.Tx) error {
		*calls++
		w, err := tx.GetWorkspace("ws-a")
		if err != nil {
			return err
		}
		if *calls <= n {
			// Another transaction (not nested in this one) commits a
			// change to the record this one read.
			if err := s.Update(t.Context(), increment); err != nil {
				return fmt.Errorf("interfering update: %w", err)
			}
		}
		w.ActivationCounter++
		return tx.PutWorkspace(w)
	}
}

func TestConflictRetried(t *testing.T) {
	s := newCounterStore(t, testOptions)
	calls := 0
	if err := s.Update(t.Context(), interfering(t, s, 1, &calls)); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if calls != 2 {
		t.Errorf("fn ran %d times, want 2 (one conflict, one retry)", calls)
	}
	if got := counter(t, s); got != 2 {
		t.Errorf("counter = %d, want 2: the interfering increment and the retried one", got)
	}
}

func TestConflictRetriesExhausted(t *testing.T) {
	for _, tc := range []struct {
		max       int
		wantCalls int
	}{{-1, 1}, {2, 3}} {
		t.Run(fmt.Sprintf("MaxConflictRetries=%d", tc.max), func(t *testing.T) {
			opts := testOptions
			opts.MaxConflictRetries = tc.max
			s := newCounterStore(t, opts)
			calls := 0
			err := s.Update(t.Context(), interfering(t, s, 100, &calls))
			if !errors.Is(err, store.ErrTxConflict) || !errors.Is(err, baton.ErrUnavailable) {
				t.Errorf("Update: err = %v, want store.ErrTxConflict", err)
			}
			if calls != tc.wantCalls {
				t.Errorf("fn ran %d times, want %d", calls, tc.wantCalls)
			}
			if got := counter(t, s); got != int64(tc.wantCalls) {
				t.Errorf("counter = %d, want %d: only the interfering increments", got, tc.wantCalls)
			}
		})
	}
}

// TestContextEndsRetries cancels the context during a try that then
// conflicts: Update does not run fn again.
func TestContextEndsRetries(t *testing.T) {
	s := newCounterStore(t, testOptions)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	calls := 0
	inner := interfering(t, s, 100, &calls)
	err := s.Update(ctx, func(tx store.Tx) error {
		err := inner(tx)
		cancel()
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update: err = %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("fn ran %d times, want 1", calls)
	}
	if got := counter(t, s); got != 1 {
		t.Errorf("counter = %d, want 1 (the interfering increment)", got)
	}
}

// TestConcurrentIncrements runs read-modify-write Updates from several
// goroutines: the store retries the conflicts they cause, and none of the
// increments is lost.
func TestConcurrentIncrements(t *testing.T) {
	const writers, each = 8, 25
	s := newCounterStore(t, badgerstore.Options{Small: true, MaxConflictRetries: 1000})
	var calls atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := make(chan struct{})
	for range writers {
		wg.Go(func() {
			<-start
			for range each {
				if err := s.Update(t.Context(), func(tx store.Tx) error { calls.Add(1); return increment(tx) }); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Update: %v", err)
	}
	if got := counter(t, s); got != writers*each {
		t.Errorf("counter = %d after %d increments: %d lost", got, writers*each, writers*each-got)
	}
	t.Logf("%d increments took %d runs of fn (%d conflict retries)", writers*each, calls.Load(), calls.Load()-writers*each)
}

// TestUniquenessThroughConflicts lets another Update take a unique key
// after this one found it free: the commit conflicts, and the retry sees
// the key taken. Uniqueness rests on a Get of one key, not on a scan.
func TestUniquenessThroughConflicts(t *testing.T) {
	pending := func(id baton.HandoffID, req string) store.Handoff {
		return store.Handoff{ID: id, Workspace: "ws-a", RequestID: req, State: store.StateStopping}
	}
	for _, tc := range []struct {
		name   string
		first  store.Handoff // committed by the other Update
		second store.Handoff // inserted by this one
		want   error         // what the retry returns
	}{
		{"pending slot", pending("h-1", "r-1"), pending("h-2", "r-2"), store.ErrDuplicate},
		{"request id", store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateCompleted},
			store.Handoff{ID: "h-2", Workspace: "ws-a", RequestID: "r-1", State: store.StateCompleted}, store.ErrDuplicate},
		// The retry finds h-1 stored under another request id.
		{"handoff id", store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateCompleted},
			store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-2", State: store.StateCompleted}, baton.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, t.TempDir(), testOptions)
			calls := 0
			err := s.Update(t.Context(), func(tx store.Tx) error {
				calls++
				if hs, err := tx.PendingHandoffs("ws-a"); calls == 1 && (err != nil || len(hs) != 0) {
					return fmt.Errorf("PendingHandoffs before the race: %v, %w", hs, err)
				}
				if calls == 1 {
					if err := s.Update(t.Context(), func(tx store.Tx) error { return tx.PutHandoff(tc.first) }); err != nil {
						return fmt.Errorf("the other insert: %w", err)
					}
				}
				return tx.PutHandoff(tc.second)
			})
			if !errors.Is(err, tc.want) {
				t.Errorf("Update: err = %v, want %v from the retry", err, tc.want)
			}
			if calls != 2 {
				t.Errorf("fn ran %d times, want 2", calls)
			}
			storetest.View(t, s, func(tx store.Tx) error {
				l, err := tx.ListHandoffs("ws-a")
				if err != nil || len(l) != 1 || l[0].ID != tc.first.ID || l[0].RequestID != tc.first.RequestID {
					t.Errorf("ListHandoffs = %v, %v; want only the first", l, err)
				}
				return nil
			})
		})
	}
}

// listCase is a list read and a write that adds one entry to that list.
type listCase struct {
	name string
	read func(tx store.Tx) (int, error)
	add  func(tx store.Tx) error
	// own, if set, is a write to the same list this transaction makes
	// before reading it (it adds one entry too).
	own func(tx store.Tx) error
}

func count[T any](l []T, err error) (int, error) { return len(l), err }

var (
	now    = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)
	listed = []listCase{
		{name: "ListWorkspaces",
			read: func(tx store.Tx) (int, error) { return count(tx.ListWorkspaces()) },
			add:  func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{ID: "ws-new"}) }},
		{name: "ListSessions",
			read: func(tx store.Tx) (int, error) { return count(tx.ListSessions("ws-a")) },
			add: func(tx store.Tx) error {
				err := tx.PutSession(store.Session{ID: "s-new", Workspace: "ws-a"})
				return err
			}},
		{name: "ListSessions, a session moved in",
			read: func(tx store.Tx) (int, error) { return count(tx.ListSessions("ws-a")) },
			add:  func(tx store.Tx) error { return tx.PutSession(store.Session{ID: "s-b", Workspace: "ws-a"}) }},
		{name: "ListHandoffs",
			read: func(tx store.Tx) (int, error) { return count(tx.ListHandoffs("ws-a")) },
			add: func(tx store.Tx) error {
				return tx.PutHandoff(store.Handoff{ID: "h-new", Workspace: "ws-a", RequestID: "r-new", State: store.StateCompleted})
			}},
		{name: "PendingHandoffs(\"\")",
			read: func(tx store.Tx) (int, error) { return count(tx.PendingHandoffs("")) },
			add: func(tx store.Tx) error {
				return tx.PutHandoff(store.Handoff{ID: "h-new", Workspace: "ws-b", RequestID: "r-new", State: store.StateStarting})
			}},
		{name: "PendingHandoffs(\"\"), a handoff back to pending",
			read: func(tx store.Tx) (int, error) { return count(tx.PendingHandoffs("")) },
			add: func(tx store.Tx) error {
				return tx.PutHandoff(store.Handoff{ID: "h-done", Workspace: "ws-c", RequestID: "r-done", State: store.StateFailed})
			}},
		{name: "PendingHandoffs(\"\") after writing to it",
			read: func(tx store.Tx) (int, error) { return count(tx.PendingHandoffs("")) },
			add: func(tx store.Tx) error {
				return tx.PutHandoff(store.Handoff{ID: "h-new", Workspace: "ws-b", RequestID: "r-new", State: store.StateStarting})
			},
			own: func(tx store.Tx) error {
				return tx.PutHandoff(store.Handoff{ID: "h-own", Workspace: "ws-d", RequestID: "r-own", State: store.StateStopping})
			}},
		{name: "ListWakeups pinned",
			read: func(tx store.Tx) (int, error) { return count(tx.ListWakeups("ws-a", "s-a")) },
			add: func(tx store.Tx) error {
				return tx.PutWakeup(store.Wakeup{ID: "w-new", Workspace: "ws-a", Session: "s-a", At: now, Status: store.WakeupFired})
			}},
		{name: "ListWakeups",
			read: func(tx store.Tx) (int, error) { return count(tx.ListWakeups("ws-a", "")) },
			add: func(tx store.Tx) error {
				return tx.PutWakeup(store.Wakeup{ID: "w-new", Workspace: "ws-a", At: now, Status: store.WakeupFired})
			}},
		{name: "DueWakeups",
			read: func(tx store.Tx) (int, error) { return count(tx.DueWakeups(now, 0)) },
			add: func(tx store.Tx) error {
				return tx.PutWakeup(store.Wakeup{ID: "w-new", Workspace: "ws-b", At: now.Add(-time.Hour), Status: store.WakeupPending})
			}},
		{name: "DueWakeups, a wakeup revived",
			read: func(tx store.Tx) (int, error) { return count(tx.DueWakeups(now, 0)) },
			add: func(tx store.Tx) error {
				return tx.PutWakeup(store.Wakeup{ID: "w-fired", Workspace: "ws-a", At: now, Status: store.WakeupPending})
			}},
		{name: "DueWakeups after writing to it",
			read: func(tx store.Tx) (int, error) { return count(tx.DueWakeups(now, 0)) },
			add: func(tx store.Tx) error {
				return tx.PutWakeup(store.Wakeup{ID: "w-new", Workspace: "ws-b", At: now.Add(-time.Hour), Status: store.WakeupPending})
			},
			own: func(tx store.Tx) error {
				return tx.PutWakeup(store.Wakeup{ID: "w-own", Workspace: "ws-a", At: now, Status: store.WakeupPending})
			}},
		{name: "QueuedContinuations",
			read: func(tx store.Tx) (int, error) { return count(tx.QueuedContinuations()) },
			add: func(tx store.Tx) error {
				return tx.PutContinuation(store.Continuation{ID: "c-new", Workspace: "ws-b", State: store.ContinuationQueued})
			}},
		{name: "LiveLaunches(ws)",
			read: func(tx store.Tx) (int, error) { return count(tx.LiveLaunches("ws-a")) },
			add: func(tx store.Tx) error {
				return tx.PutLaunch(store.Launch{ID: "l-new", Workspace: "ws-a"})
			}},
		{name: "LiveLaunches(ws), a launch revived",
			read: func(tx store.Tx) (int, error) { return count(tx.LiveLaunches("ws-a")) },
			add: func(tx store.Tx) error {
				return tx.PutLaunch(store.Launch{ID: "l-gone", Workspace: "ws-a"})
			}},
		{name: "LiveLaunches(ws) after writing to it",
			read: func(tx store.Tx) (int, error) { return count(tx.LiveLaunches("ws-a")) },
			add: func(tx store.Tx) error {
				return tx.PutLaunch(store.Launch{ID: "l-gone", Workspace: "ws-a"})
			},
			own: func(tx store.Tx) error {
				return tx.PutLaunch(store.Launch{ID: "l-own", Workspace: "ws-a"})
			}},
		{name: "LiveLaunches of every workspace",
			read: func(tx store.Tx) (int, error) { return count(tx.LiveLaunches("")) },
			add: func(tx store.Tx) error {
				return tx.PutLaunch(store.Launch{ID: "l-new", Workspace: "ws-b"})
			}},
		{name: "OpenInstructions",
			read: func(tx store.Tx) (int, error) { return count(tx.OpenInstructions("ws-a")) },
			add: func(tx store.Tx) error {
				return tx.PutInstruction(store.Instruction{ID: "i-new", Workspace: "ws-a", State: store.InstructionPending})
			}},
		{name: "ListContinuations",
			read: func(tx store.Tx) (int, error) { return count(tx.ListContinuations("ws-a")) },
			add: func(tx store.Tx) error {
				return tx.PutContinuation(store.Continuation{ID: "c-new", Workspace: "ws-a", State: store.ContinuationStarted})
			}},
	}
)

// TestListReadsAreSerializable reads a list in an Update while another
// Update adds an entry to it and commits. badger alone would not notice
// (a scan takes no range lock): the list's guard key makes the first
// Update conflict, and its retry sees the new entry.
func TestListReadsAreSerializable(t *testing.T) {
	for _, tc := range listed {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, t.TempDir(), testOptions)
			storetest.Update(t, s, func(tx store.Tx) error {
				err := tx.PutSession(store.Session{ID: "s-b", Workspace: "ws-b"})
				return errors.Join(err,
					tx.PutHandoff(store.Handoff{ID: "h-done", Workspace: "ws-c", RequestID: "r-done", State: store.StateCompleted}),
					tx.PutWakeup(store.Wakeup{ID: "w-fired", Workspace: "ws-a", At: now, Status: store.WakeupFired}),
					tx.PutLaunch(store.Launch{ID: "l-gone", Workspace: "ws-a", Gone: true}))
			})
			var seen []int
			err := s.Update(t.Context(), func(tx store.Tx) error {
				if tc.own != nil {
					if err := tc.own(tx); err != nil {
						return err
					}
				}
				n, err := tc.read(tx)
				if err != nil {
					return err
				}
				seen = append(seen, n)
				if len(seen) == 1 {
					if err := s.Update(t.Context(), tc.add); err != nil {
						return fmt.Errorf("the other Update: %w", err)
					}
				}
				// A write, so that this Update has something to commit.
				return tx.PutReservation(store.Reservation{Workspace: "ws-z", Epoch: int64(len(seen))})
			})
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if len(seen) != 2 || seen[1] != seen[0]+1 {
				t.Errorf("list lengths seen by the runs of fn = %v, want two runs, the second seeing one more", seen)
			}
		})
	}
}

// TestLaunchesOfTwoWorkspacesDoNotConflict records and ends a launch of
// ws-a, after reading its live launches, while another Update records and
// ends one of ws-b: the first Update must not re-run (the live launches
// of a workspace are one value per workspace, and the global list's guard
// is only written).
func TestLaunchesOfTwoWorkspacesDoNotConflict(t *testing.T) {
	s := open(t, t.TempDir(), testOptions)
	launch := func(tx store.Tx, id baton.LaunchID, ws baton.WorkspaceID) error {
		l := store.Launch{ID: id, Workspace: ws}
		if err := tx.PutLaunch(l); err != nil {
			return err
		}
		l.Gone = true
		return tx.PutLaunch(l)
	}
	storetest.Update(t, s, func(tx store.Tx) error { return launch(tx, "l-b0", "ws-b") })
	runs := 0
	err := s.Update(t.Context(), func(tx store.Tx) error {
		runs++
		if _, err := tx.LiveLaunches("ws-a"); err != nil {
			return err
		}
		if runs == 1 {
			if err := s.Update(t.Context(), func(tx store.Tx) error { return launch(tx, "l-b1", "ws-b") }); err != nil {
				return fmt.Errorf("the other Update: %w", err)
			}
		}
		return launch(tx, baton.LaunchID(fmt.Sprintf("l-a%d", runs)), "ws-a")
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if runs != 1 {
		t.Errorf("the Update of ws-a ran %d times, want 1: it conflicted with one of ws-b", runs)
	}
}
