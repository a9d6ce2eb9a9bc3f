package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// Two stores (two pools, as two processes would have) race to insert a
// pending handoff into the same empty slot: exactly one wins each round,
// the other gets store.ErrDuplicate, and the slot holds the winner.
func TestTwoStoresRaceForThePendingSlot(t *testing.T) {
	schema := freshSchema(t)
	stores := []*pgstore.Store{open(t, schema, pgstore.Options{}), open(t, schema, pgstore.Options{})}
	const rounds = 20
	for round := range rounds {
		ws := baton.WorkspaceID(fmt.Sprint("ws-", round))
		if err := stores[0].Update(t.Context(), func(tx store.Tx) error {
			return tx.PutWorkspace(store.Workspace{ID: ws, Name: "race"})
		}); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		errs := make([]error, len(stores))
		var wg sync.WaitGroup
		for i, s := range stores {
			wg.Go(func() {
				<-start
				errs[i] = s.Update(t.Context(), func(tx store.Tx) error {
					return tx.PutHandoff(store.Handoff{
						ID: baton.HandoffID(fmt.Sprintf("h-%d-%d", round, i)), Workspace: ws,
						RequestID: fmt.Sprint("r-", i), State: store.StateStopping, Attempt: 1,
						CreatedAt: time.Now(), UpdatedAt: time.Now(),
					})
				})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: both stores inserted a pending handoff", round)
				}
				winner = i
			case !errors.Is(err, store.ErrDuplicate):
				t.Fatalf("round %d: store %d: err = %v, want nil or store.ErrDuplicate", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no store won: %v", round, errs)
		}
		// Both stores see the winner in the slot.
		for i, s := range stores {
			if err := s.View(t.Context(), func(tx store.Tx) error {
				hs, err := tx.PendingHandoffs(ws)
				if err != nil {
					return err
				}
				if want := baton.HandoffID(fmt.Sprintf("h-%d-%d", round, winner)); len(hs) != 1 || hs[0].ID != want {
					t.Errorf("round %d: store %d sees %v in the slot, want %s", round, i, hs, want)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Text PostgreSQL cannot hold is refused as invalid, and nothing is kept.
func TestTextPostgreSQLRefuses(t *testing.T) {
	s := open(t, "", pgstore.Options{})
	for _, name := range []string{"nul \x00 byte", "bad utf-8 \xff"} {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			return tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: name})
		})
		if !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("PutWorkspace(Name %q): err = %v, want baton.ErrInvalid", name, err)
		}
	}
	if err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetWorkspace("ws-a")
		return err
	}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetWorkspace after refused inserts: err = %v, want store.ErrNotFound", err)
	}
}

// An Update of a workspace waits for the Update that holds the
// workspace's lock, in another Store, and then sees what it committed: no
// increment is lost. An Update of another workspace, meanwhile, waits for
// nothing: it commits inside the holder's function (it would never
// return if it waited for the holder).
func TestUpdatesOfOneWorkspaceWaitOthersDoNot(t *testing.T) {
	schema := freshSchema(t)
	s, other := open(t, schema, pgstore.Options{}), open(t, schema, pgstore.Options{})
	ctx := t.Context()
	update(t, s, func(tx store.Tx) error {
		return errors.Join(tx.PutWorkspace(store.Workspace{ID: "ws-a"}), tx.PutWorkspace(store.Workspace{ID: "ws-b"}))
	})
	increment := func(tx store.Tx, id baton.WorkspaceID) error {
		w, err := tx.GetWorkspace(id)
		if err != nil {
			return err
		}
		w.ActivationCounter++
		return tx.PutWorkspace(w)
	}
	waited := make(chan error, 1)
	update(t, s, func(tx store.Tx) error {
		if err := increment(tx, "ws-a"); err != nil {
			return err
		}
		if err := other.Update(ctx, func(tx store.Tx) error { return increment(tx, "ws-b") }); err != nil {
			return fmt.Errorf("the Update of another workspace: %w", err)
		}
		go func() { waited <- other.Update(ctx, func(tx store.Tx) error { return increment(tx, "ws-a") }) }()
		// The other Update of ws-a waits for this one's lock.
		return waitFor(ctx, func() (bool, error) { return lockWaits(t) == 1, nil })
	})
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if err := s.View(ctx, func(tx store.Tx) error {
		for id, want := range map[baton.WorkspaceID]int64{"ws-a": 2, "ws-b": 1} {
			if w, err := tx.GetWorkspace(id); err != nil || w.ActivationCounter != want {
				return fmt.Errorf("%s: counter %d (%v), want %d", id, w.ActivationCounter, err, want)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// lockWaits counts the advisory locks the server's sessions wait for.
func lockWaits(t *testing.T) int {
	t.Helper()
	var n int
	if err := pgxQueryRow(t, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// pgxQueryRow runs a one-row query on a connection of its own.
func pgxQueryRow(t *testing.T, sql string, dst ...any) error {
	conn, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.QueryRow(t.Context(), sql).Scan(dst...)
}

// Two Updates that take the locks of two workspaces in opposite orders
// deadlock; PostgreSQL aborts one (after its deadlock_timeout, a second
// by default), which runs again, and both commit. With no retries, the
// one aborted returns store.ErrTxConflict.
func TestDeadlockRetried(t *testing.T) {
	for _, tt := range []struct {
		name    string
		retries int
		wantErr error
	}{{"retried", 0, nil}, {"never retried", -1, store.ErrTxConflict}} {
		t.Run(tt.name, func(t *testing.T) {
			schema := freshSchema(t)
			s := open(t, schema, pgstore.Options{MaxConflictRetries: tt.retries})
			update(t, s, func(tx store.Tx) error {
				return errors.Join(tx.PutWorkspace(store.Workspace{ID: "ws-a"}), tx.PutWorkspace(store.Workspace{ID: "ws-b"}))
			})
			var first sync.WaitGroup
			first.Add(2)
			errs := make([]error, 2)
			var runs [2]int
			var wg sync.WaitGroup
			for i, order := range [][]baton.WorkspaceID{{"ws-a", "ws-b"}, {"ws-b", "ws-a"}} {
				wg.Go(func() {
					errs[i] = s.Update(t.Context(), func(tx store.Tx) error {
						runs[i]++
						for k, id := range order {
							w, err := tx.GetWorkspace(id)
							if err != nil {
								return err
							}
							if k == 0 && runs[i] == 1 {
								first.Done()
								first.Wait() // both hold their first lock
							}
							w.ActivationCounter++
							if err := tx.PutWorkspace(w); err != nil {
								return err
							}
						}
						return nil
					})
				})
			}
			wg.Wait()
			failed := 0
			for _, err := range errs {
				switch {
				case err == nil:
				case tt.wantErr != nil && errors.Is(err, tt.wantErr):
					failed++
				default:
					t.Fatalf("Update: %v", err)
				}
			}
			if tt.wantErr != nil && failed != 1 {
				t.Fatalf("errors %v: want one store.ErrTxConflict", errs)
			}
			if tt.wantErr == nil && runs[0]+runs[1] != 3 {
				t.Errorf("the functions ran %v times, want one of them twice", runs)
			}
			want := int64(2 - failed)
			if err := s.View(t.Context(), func(tx store.Tx) error {
				for _, id := range []baton.WorkspaceID{"ws-a", "ws-b"} {
					if w, err := tx.GetWorkspace(id); err != nil || w.ActivationCounter != want {
						return fmt.Errorf("%s: counter %d (%v), want %d", id, w.ActivationCounter, err, want)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A transaction idle past IdleInTransactionTimeout (a process frozen
// inside an Update) is ended by the server, which releases its lock: an
// Update of the same workspace, waiting for it, commits; the frozen one,
// resumed, finds its connection gone, and nothing it wrote is kept.
func TestIdleHolderEndedByServer(t *testing.T) {
	schema := freshSchema(t)
	s := open(t, schema, pgstore.Options{IdleInTransactionTimeout: 300 * time.Millisecond, MaxConflictRetries: -1})
	other := open(t, schema, pgstore.Options{})
	ctx := t.Context()
	update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(store.Workspace{ID: "ws-a"}) })
	waited := make(chan error, 1)
	err := s.Update(ctx, func(tx store.Tx) error {
		w, err := tx.GetWorkspace("ws-a")
		if err != nil {
			return err
		}
		go func() {
			waited <- other.Update(ctx, func(tx store.Tx) error {
				w, err := tx.GetWorkspace("ws-a")
				if err != nil {
					return err
				}
				w.Name = "other"
				return tx.PutWorkspace(w)
			})
		}()
		// Frozen: the other Update commits meanwhile, once the server has
		// ended this transaction.
		if err := <-waited; err != nil {
			return fmt.Errorf("the waiting Update: %w", err)
		}
		w.Name = "frozen"
		return tx.PutWorkspace(w)
	})
	if !errors.Is(err, pgstore.ErrDatabase) {
		t.Fatalf("the frozen Update: err = %v, want pgstore.ErrDatabase", err)
	}
	if err := s.View(ctx, func(tx store.Tx) error {
		w, err := tx.GetWorkspace("ws-a")
		if err == nil && w.Name != "other" {
			err = fmt.Errorf("name %q, want %q", w.Name, "other")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// update runs fn in s.Update and fails the test on an error.
func update(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond every millisecond until it holds, for at most ten
// seconds.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		t := time.NewTimer(time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
