package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var isolationTests = []testCase{
	{"ConcurrentIncrements", testConcurrentIncrements},
	{"ConcurrentPendingInserts", testConcurrentPendingInserts},
	{"ConcurrentRequestIDs", testConcurrentRequestIDs},
	{"ViewIsConsistentSnapshot", testViewSnapshot},
	{"ViewIsReadOnly", testViewReadOnly},
}

const (
	writers          = 8
	incrementsPerOne = 25
)

// testConcurrentIncrements runs read-modify-write Updates of one counter
// from several goroutines: any lost update shows in the final value.
func testConcurrentIncrements(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-a")) })
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range writers {
		wg.Go(func() {
			<-start
			for range incrementsPerOne {
				err := update(t.Context(), s, func(tx store.Tx) error {
					w, err := tx.GetWorkspace("ws-a")
					if err != nil {
						return err
					}
					w.ActivationCounter++
					return tx.PutWorkspace(w)
				})
				if err != nil {
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
	View(t, s, func(tx store.Tx) error {
		w, err := tx.GetWorkspace("ws-a")
		if err != nil {
			return err
		}
		if want := int64(writers * incrementsPerOne); w.ActivationCounter != want {
			t.Errorf("counter = %d after %d committed increments: %d updates lost", w.ActivationCounter, want, want-w.ActivationCounter)
		}
		return nil
	})
}

// race runs insert(i) for i in [0, writers) at once, each in its own Update,
// and returns their errors.
func race(t *testing.T, s store.Store, insert func(tx store.Tx, i int) error) []error {
	t.Helper()
	results := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		wg.Go(func() {
			<-start
			results[i] = update(t.Context(), s, func(tx store.Tx) error { return insert(tx, i) })
		})
	}
	close(start)
	wg.Wait()
	return results
}

// wantOneWinner checks that exactly one insert succeeded and every other
// one failed with store.ErrDuplicate; it returns the winner's index.
func wantOneWinner(t *testing.T, results []error) int {
	t.Helper()
	winner := -1
	for i, err := range results {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("inserts %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrDuplicate) || !errors.Is(err, baton.ErrConflict):
			t.Errorf("insert %d: err = %v, want store.ErrDuplicate", i, err)
		}
	}
	if winner < 0 {
		t.Errorf("no insert succeeded: %v", results)
	}
	return winner
}

func testConcurrentPendingInserts(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-a")) })
	results := race(t, s, func(tx store.Tx, i int) error {
		return tx.PutHandoff(handoff("ws-a", baton.HandoffID(fmt.Sprintf("h-%d", i)), fmt.Sprintf("r-%d", i), store.StateStopping))
	})
	winner := wantOneWinner(t, results)
	View(t, s, func(tx store.Tx) error {
		all, err := tx.ListHandoffs("ws-a")
		if err != nil {
			return err
		}
		p, err := pendingOf(tx, "ws-a")
		if err != nil {
			return err
		}
		if len(all) != 1 || p.ID != baton.HandoffID(fmt.Sprintf("h-%d", winner)) {
			t.Errorf("stored handoffs %v, pending %q; want only the winner h-%d", all, p.ID, winner)
		}
		return nil
	})
}

func testConcurrentRequestIDs(t *testing.T, s store.Store) {
	results := race(t, s, func(tx store.Tx, i int) error {
		// Terminal handoffs: only the request id can collide.
		return tx.PutHandoff(handoff("ws-a", baton.HandoffID(fmt.Sprintf("h-%d", i)), "same-request", store.StateCompleted))
	})
	winner := wantOneWinner(t, results)
	View(t, s, func(tx store.Tx) error {
		h, err := tx.HandoffByRequest("ws-a", "same-request")
		if err != nil {
			return err
		}
		all, err := tx.ListHandoffs("ws-a")
		if err != nil {
			return err
		}
		if len(all) != 1 || h.ID != baton.HandoffID(fmt.Sprintf("h-%d", winner)) {
			t.Errorf("stored handoffs %v, by request %q; want only the winner h-%d", all, h.ID, winner)
		}
		return nil
	})
}

// testViewSnapshot reads two records that every Update changes together:
// a View that sees one before and one after some Update is no snapshot.
func testViewSnapshot(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(workspace("ws-a")), tx.PutWorkspace(workspace("ws-b")))
	})
	const updates = 100
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < updates && err == nil; i++ {
			err = update(t.Context(), s, func(tx store.Tx) error {
				for _, id := range []baton.WorkspaceID{"ws-a", "ws-b"} {
					w, err := tx.GetWorkspace(id)
					if err != nil {
						return err
					}
					w.ActivationCounter++
					if err := tx.PutWorkspace(w); err != nil {
						return err
					}
				}
				return nil
			})
		}
		done <- err
	}()
	for writing := true; writing; {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("writer: %v", err)
			}
			writing = false
		default:
		}
		View(t, s, func(tx store.Tx) error {
			a, err := tx.GetWorkspace("ws-a")
			if err != nil {
				return err
			}
			b, err := tx.GetWorkspace("ws-b")
			if err != nil {
				return err
			}
			a2, err := tx.GetWorkspace("ws-a")
			if err != nil {
				return err
			}
			if a.ActivationCounter != b.ActivationCounter || a2.ActivationCounter != a.ActivationCounter {
				t.Errorf("one View read counters a=%d, b=%d, a again=%d; a snapshot shows them equal",
					a.ActivationCounter, b.ActivationCounter, a2.ActivationCounter)
			}
			return nil
		})
	}
}

func testViewReadOnly(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	before := snapshot(t, s, "ws-a", "ws-b")
	writes := []struct {
		name  string
		write func(tx store.Tx) error
	}{
		{"PutWorkspace", func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-b")) }},
		{"PutWorkspace", func(tx store.Tx) error {
			w := workspace("ws-a")
			w.Name = "changed"
			return tx.PutWorkspace(w)
		}},
		{"PutSession", func(tx store.Tx) error { return tx.PutSession(session("ws-a", "s-2")) }},
		{"PutSession", func(tx store.Tx) error { return tx.PutSession(session("ws-a", "s-1")) }},
		{"PutHandoff", func(tx store.Tx) error {
			return tx.PutHandoff(handoff("ws-b", "h-2", "r-2", store.StateStopping))
		}},
		{"PutHandoff", func(tx store.Tx) error {
			return tx.PutHandoff(handoff("ws-a", "h-1", "r-1", store.StateCompleted))
		}},
		{"PutReservation", func(tx store.Tx) error { return tx.PutReservation(store.Reservation{Workspace: "ws-b", Held: true}) }},
		{"PutWakeup", func(tx store.Tx) error {
			return tx.PutWakeup(wakeup("ws-a", "w-2", "", at(1), store.WakeupPending))
		}},
		{"PutWakeup", func(tx store.Tx) error {
			return tx.PutWakeup(wakeup("ws-a", "w-1", "s-1", at(10), store.WakeupFired))
		}},
		{"PutContinuation", func(tx store.Tx) error {
			return tx.PutContinuation(continuation("ws-a", "c-2", store.ContinuationQueued))
		}},
		{"PutContinuation", func(tx store.Tx) error {
			return tx.PutContinuation(continuation("ws-a", "c-1", store.ContinuationStarted))
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			View(t, s, func(tx store.Tx) error {
				wantErr(t, w.name+" in View", w.write(tx), baton.ErrInternal)
				return nil // a View that goes on after the refusal commits nothing either
			})
		})
	}
	diff(t, "store after writes in View", before, snapshot(t, s, "ws-a", "ws-b"))
}
