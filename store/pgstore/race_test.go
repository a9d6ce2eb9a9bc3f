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
			return tx.InsertWorkspace(store.Workspace{ID: ws, Name: "race"})
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
					return tx.InsertHandoff(store.Handoff{
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
				h, err := tx.PendingHandoff(ws)
				if err != nil {
					return err
				}
				if want := baton.HandoffID(fmt.Sprintf("h-%d-%d", round, winner)); h.ID != want {
					t.Errorf("round %d: store %d sees %s in the slot, want %s", round, i, h.ID, want)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A lost serialization race is retried, and reported as
// store.ErrTxConflict when retries are exhausted. The store reads from the
// server (no row cache), so that its read comes before the other store's
// write: a read from the cache would be checked at the commit and found
// stale, which is not a lost race (TestCachedRowChangedBehind).
func TestConflictRetries(t *testing.T) {
	tests := []struct {
		name     string
		retries  int
		wantErr  error
		wantRuns int
	}{
		{"retried", 0, nil, 2},
		{"never retried", -1, store.ErrTxConflict, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := freshSchema(t)
			s := open(t, schema, pgstore.Options{MaxConflictRetries: tt.retries, CacheRows: -1})
			other := open(t, schema, pgstore.Options{})
			if err := s.Update(t.Context(), func(tx store.Tx) error {
				return tx.InsertWorkspace(store.Workspace{ID: "ws-a", Name: "a"})
			}); err != nil {
				t.Fatal(err)
			}
			runs := 0
			err := s.Update(t.Context(), func(tx store.Tx) error {
				runs++
				w, err := tx.GetWorkspace("ws-a")
				if err != nil {
					return err
				}
				if runs == 1 {
					// Another store changes the row this one has read.
					if err := other.Update(t.Context(), func(tx store.Tx) error {
						return tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: "other"})
					}); err != nil {
						return err
					}
				}
				w.Name += "+mine"
				return tx.PutWorkspace(w)
			})
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("Update: err = %v, want %v", err, tt.wantErr)
			}
			if runs != tt.wantRuns {
				t.Errorf("fn ran %d times, want %d", runs, tt.wantRuns)
			}
			want := map[bool]string{true: "other+mine", false: "other"}[tt.wantErr == nil]
			if err := s.View(t.Context(), func(tx store.Tx) error {
				w, err := tx.GetWorkspace("ws-a")
				if err == nil && w.Name != want {
					t.Errorf("name = %q, want %q", w.Name, want)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Text PostgreSQL cannot hold is refused as invalid, and nothing is kept.
func TestTextPostgreSQLRefuses(t *testing.T) {
	s := open(t, "", pgstore.Options{})
	for _, name := range []string{"nul \x00 byte", "bad utf-8 \xff"} {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			return tx.InsertWorkspace(store.Workspace{ID: "ws-a", Name: name})
		})
		if !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("InsertWorkspace(Name %q): err = %v, want baton.ErrInvalid", name, err)
		}
	}
	if err := s.View(t.Context(), func(tx store.Tx) error {
		_, err := tx.GetWorkspace("ws-a")
		return err
	}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetWorkspace after refused inserts: err = %v, want store.ErrNotFound", err)
	}
}

// An Update that lost three serialization races runs its fourth attempt
// alone: the Updates of another store that start meanwhile wait at the
// gate (PostgreSQL shows their locks as not granted) until the fourth
// attempt has committed, both kinds: one that begins with BEGIN (its row
// not cached: a read, then the commit) and one of a single batch (its
// rows cached), which runs in the batch's implicit transaction. As in
// TestConflictRetries, the losing store reads from the server.
func TestLosingUpdateRunsAlone(t *testing.T) {
	schema := freshSchema(t)
	s := open(t, schema, pgstore.Options{CacheRows: -1})
	other := open(t, schema, pgstore.Options{})
	ctx := t.Context()
	for _, ws := range []baton.WorkspaceID{"ws-a", "ws-b", "ws-c"} {
		if err := s.Update(ctx, func(tx store.Tx) error {
			return tx.InsertWorkspace(store.Workspace{ID: ws, Name: string(ws)})
		}); err != nil {
			t.Fatal(err)
		}
	}
	rename := func(ws baton.WorkspaceID, name string) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			w, err := tx.GetWorkspace(ws)
			if err != nil {
				return err
			}
			w.Name = name
			return tx.PutWorkspace(w)
		}
	}
	// other caches ws-c's row: its next Update of ws-c is one batch.
	if err := other.Update(ctx, rename("ws-c", "cached")); err != nil {
		t.Fatal(err)
	}
	watcher, err := pgx.Connect(ctx, serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(context.Background())
	// waiting counts the Updates waiting at the gate's table and at its
	// advisory lock.
	waiting := func() (table, advisory int, err error) {
		err = watcher.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
				JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = $1 AND c.relname = 'schema_migrations' AND NOT l.granted),
			(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND (classid::bigint << 32 | objid::bigint) = hashtextextended('baton.pgstore.gate:' || $1, 0))`,
			schema).Scan(&table, &advisory)
		return table, advisory, err
	}

	runs := 0
	var waited error
	otherDone := make(chan error, 2)
	err = s.Update(ctx, func(tx store.Tx) error {
		runs++
		w, err := tx.GetWorkspace("ws-a")
		if err != nil {
			return err
		}
		if runs <= 3 {
			// Lose: another store changes the row this one has read.
			if err := other.Update(ctx, func(tx store.Tx) error {
				return tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: fmt.Sprint("other ", runs)})
			}); err != nil {
				return err
			}
		} else {
			// Alone: Updates of other workspaces wait for this one.
			for _, ws := range []baton.WorkspaceID{"ws-b", "ws-c"} {
				go func() { otherDone <- other.Update(ctx, rename(ws, "after")) }()
			}
			waited = waitFor(ctx, func() (bool, error) {
				table, advisory, err := waiting()
				return table > 0 && advisory > 0, err
			})
		}
		w.Name += "+mine"
		return tx.PutWorkspace(w)
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if waited != nil {
		table, advisory, _ := waiting()
		t.Errorf("the Updates of the other store did not both wait at the gate during the fourth attempt (%d at the table, %d at the advisory lock): %v",
			table, advisory, waited)
	}
	if runs != 4 {
		t.Errorf("fn ran %d times, want 4", runs)
	}
	for range 2 {
		if err := <-otherDone; err != nil {
			t.Errorf("a waiting Update: %v", err)
		}
	}
	// The gate is open again: the session lock of the fourth attempt
	// went with it.
	if err := other.Update(ctx, rename("ws-c", "later")); err != nil {
		t.Fatal(err)
	}
	var held int
	if err := watcher.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
		AND (classid::bigint << 32 | objid::bigint) = hashtextextended('baton.pgstore.gate:' || $1, 0)`, schema).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d advisory locks of the gate held after every Update ended, want 0", held)
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
