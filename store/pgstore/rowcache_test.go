package pgstore_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// errHeld is what the functions below return when they find the
// reservation held: a decision taken on the row they read.
var errHeld = errors.New("reservation held")

// TestCachedRowChangedBehind: node A's Updates answer reads of the rows
// they read before from its row cache; node B (another Store on the
// schema, as another process would have) or a plain SQL client changes
// those rows behind A. A's next Update must decide on the new values:
// its function runs again on them, nothing B wrote is lost, and the rerun
// is not a lost serialization race (A never retries those here).
func TestCachedRowChangedBehind(t *testing.T) {
	ctx := t.Context()
	schema := freshSchema(t)
	a := open(t, schema, pgstore.Options{MaxConflictRetries: -1})
	b := open(t, schema, pgstore.Options{})
	sqlClient, err := pgx.Connect(ctx, serverURL(t)) // no search_path: names the schema
	if err != nil {
		t.Fatal(err)
	}
	defer sqlClient.Close(ctx)

	// change is what happens behind A; each case says what A's function
	// must then see.
	tests := []struct { // the first changes nothing
		name   string
		change func(t *testing.T, ws baton.WorkspaceID)
		// want is the workspace name and reservation Held A's last run
		// must see.
		wantName string
		wantHeld bool
	}{
		{"nothing", func(*testing.T, baton.WorkspaceID) {}, "a", true},
		{"another store writes the workspace", func(t *testing.T, ws baton.WorkspaceID) {
			update(t, b, func(tx store.Tx) error {
				w, err := tx.GetWorkspace(ws)
				if err != nil {
					return err
				}
				w.Name += "+b"
				return tx.PutWorkspace(w)
			})
		}, "a+b", true},
		{"another store releases the reservation", func(t *testing.T, ws baton.WorkspaceID) {
			update(t, b, func(tx store.Tx) error {
				r, err := tx.GetReservation(ws)
				if err != nil {
					return err
				}
				r.Held = false
				return tx.PutReservation(r)
			})
		}, "a", false},
		{"a SQL client writes the workspace", func(t *testing.T, ws baton.WorkspaceID) {
			_, err := sqlClient.Exec(ctx, "UPDATE "+pgx.Identifier{schema, "workspaces"}.Sanitize()+
				" SET name = name || '+sql' WHERE id = $1", string(ws))
			if err != nil {
				t.Fatal(err)
			}
		}, "a+sql", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := baton.WorkspaceID(fmt.Sprint("ws-", i))
			now := time.Now()
			update(t, a, func(tx store.Tx) error {
				return errors.Join(
					tx.InsertWorkspace(store.Workspace{ID: ws, Name: "a", CreatedAt: now, UpdatedAt: now}),
					tx.PutReservation(store.Reservation{Workspace: ws, Held: true, Epoch: 1, UpdatedAt: now}))
			})
			// A reads both rows once more: they are in its cache now.
			update(t, a, func(tx store.Tx) error {
				_, err := tx.GetWorkspace(ws)
				if err == nil {
					_, err = tx.GetReservation(ws)
				}
				return err
			})
			tt.change(t, ws)

			// A read-only Update: what it reads is what it returns.
			var seen []string
			read := func(tx store.Tx) error {
				w, err := tx.GetWorkspace(ws)
				if err != nil {
					return err
				}
				r, err := tx.GetReservation(ws)
				if err != nil {
					return err
				}
				seen = append(seen, fmt.Sprintf("%s held=%v", w.Name, r.Held))
				return nil
			}
			seen = nil
			update(t, a, read)
			want := fmt.Sprintf("%s held=%v", tt.wantName, tt.wantHeld)
			if got := seen[len(seen)-1]; got != want {
				t.Errorf("read-only Update saw %q last (runs %q), want %q", got, seen, want)
			}
			// The first run read the rows from the cache: after a change,
			// the check at the commit found them stale and fn ran again.
			if wantRuns := map[bool]int{true: 1, false: 2}[i == 0]; len(seen) != wantRuns {
				t.Errorf("read-only Update ran %d times (%q), want %d", len(seen), seen, wantRuns)
			}

			// A decision on the cached reservation that ends in fn's error.
			tt.change(t, ws)
			seen = nil
			err := a.Update(ctx, func(tx store.Tx) error {
				if err := read(tx); err != nil {
					return err
				}
				r, _ := tx.GetReservation(ws)
				if r.Held {
					return errHeld
				}
				return nil
			})
			want = fmt.Sprintf("%s held=%v", tt.wantName+suffix(tt.wantName, "a"), tt.wantHeld)
			if got := seen[len(seen)-1]; got != want {
				t.Errorf("refusing Update saw %q last (runs %q), want %q", got, seen, want)
			}
			if wantRuns := map[bool]int{true: 1, false: 2}[i == 0]; len(seen) != wantRuns {
				t.Errorf("refusing Update ran %d times (%q), want %d", len(seen), seen, wantRuns)
			}
			if gotHeld := errors.Is(err, errHeld); gotHeld != tt.wantHeld || (err != nil && !gotHeld) {
				t.Errorf("refusing Update: err = %v, want errHeld: %v", err, tt.wantHeld)
			}

			// A read-modify-write of the workspace loses nothing.
			tt.change(t, ws)
			update(t, a, func(tx store.Tx) error {
				w, err := tx.GetWorkspace(ws)
				if err != nil {
					return err
				}
				w.Name += "+a"
				return tx.PutWorkspace(w)
			})
			var got store.Workspace
			if err := b.View(ctx, func(tx store.Tx) (err error) { got, err = tx.GetWorkspace(ws); return err }); err != nil {
				t.Fatal(err)
			}
			wantName := tt.wantName + suffix(tt.wantName, "a") + suffix(tt.wantName, "a") + "+a"
			if got.Name != wantName {
				t.Errorf("after a read-modify-write on A: name %q, want %q", got.Name, wantName)
			}
		})
	}
}

// suffix is what one more tt.change appends to a workspace name that
// became name: the change's own suffix, if it appends one.
func suffix(name, base string) string {
	return name[len(base):]
}

// update runs fn in s.Update and fails the test on an error.
func update(t *testing.T, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatal(err)
	}
}

// TestRowCacheConcurrentUpdates: several goroutines of one Store, and
// another Store, increment one workspace's counter at once through its
// cached row (run with -race): every increment counts, and a View sees
// the total.
func TestRowCacheConcurrentUpdates(t *testing.T) {
	schema := freshSchema(t)
	a := open(t, schema, pgstore.Options{MaxConns: 4})
	b := open(t, schema, pgstore.Options{MaxConns: 2})
	const ws = baton.WorkspaceID("ws-count")
	update(t, a, func(tx store.Tx) error { return tx.InsertWorkspace(store.Workspace{ID: ws, Name: "count"}) })
	const perWorker = 20
	stores := []*pgstore.Store{a, a, a, b}
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			for range perWorker {
				err := s.Update(t.Context(), func(tx store.Tx) error {
					w, err := tx.GetWorkspace(ws)
					if err != nil {
						return err
					}
					w.ActivationCounter++
					w.Running = append(w.Running, baton.SessionID(fmt.Sprint("s-", i)))
					return tx.PutWorkspace(w)
				})
				if err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*pgstore.Store{a, b} {
		var w store.Workspace
		if err := s.View(t.Context(), func(tx store.Tx) (err error) { w, err = tx.GetWorkspace(ws); return err }); err != nil {
			t.Fatal(err)
		}
		count := map[baton.SessionID]int{}
		for _, id := range w.Running {
			count[id]++
		}
		want := map[baton.SessionID]int{"s-0": perWorker, "s-1": perWorker, "s-2": perWorker, "s-3": perWorker}
		if w.ActivationCounter != int64(len(stores)*perWorker) {
			t.Errorf("counter = %d, want %d", w.ActivationCounter, len(stores)*perWorker)
		}
		if diff := cmp.Diff(want, count); diff != "" {
			t.Errorf("increments per worker (-want +got):\n%s", diff)
		}
	}
}
