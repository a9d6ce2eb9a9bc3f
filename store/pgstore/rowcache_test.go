package pgstore_test

import (
	"errors"
	"fmt"
	"reflect"
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

			// A View reads the server, never the cache: it sees the change
			// at once.
			if err := a.View(ctx, func(tx store.Tx) error {
				w, err := tx.GetWorkspace(ws)
				if err == nil && w.Name != tt.wantName {
					t.Errorf("View on A: name %q, want %q", w.Name, tt.wantName)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}

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

			// A read-modify-write of the workspace loses nothing, and
			// decides on the reservation as it is.
			tt.change(t, ws)
			var held []bool
			update(t, a, func(tx store.Tx) error {
				w, err := tx.GetWorkspace(ws)
				if err != nil {
					return err
				}
				r, err := tx.GetReservation(ws)
				if err != nil {
					return err
				}
				held = append(held, r.Held)
				w.Name += "+a"
				return tx.PutWorkspace(w)
			})
			if got := held[len(held)-1]; got != tt.wantHeld {
				t.Errorf("read-modify-write saw held=%v last (runs %v), want %v", got, held, tt.wantHeld)
			}
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

// TestRowCacheReadsAsServer: a row a Store's Update wrote is cached as a
// read of it returns it (times to the microsecond in UTC, JSON columns as
// decoded, empty lists as scanned): an Update that reads it from the
// cache (one round trip: no read went to the server) gets what a View,
// which reads the server, gets.
func TestRowCacheReadsAsServer(t *testing.T) {
	proxy, url := newTripProxy(t)
	schema := freshSchema(t)
	a := openAt(t, url, schema, pgstore.Options{MaxConns: 1})
	zone := time.FixedZone("x", 3600+30*60)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891234567, zone)
	cfg := baton.EngineConfig{Engine: "demo", Model: "é <b>&</b> \u2028", Account: "acc"}
	tests := []struct {
		name string
		ws   store.Workspace
		r    store.Reservation
		h    store.Handoff
	}{
		{"nil lists",
			store.Workspace{Name: "n", Config: cfg, CreatedAt: at, UpdatedAt: at.Add(time.Nanosecond)},
			store.Reservation{Held: true, Epoch: 3, Owner: baton.TokenHash{1, 2, 3}, LeaseHolder: "node",
				LeaseExpires: at, UpdatedAt: at},
			store.Handoff{RequestID: "r", State: store.StateGenerating, Attempt: 1, SourceConfig: cfg, TargetConfig: cfg,
				GenerationToken: baton.TokenHash{9}, GenerationDeadline: at, CreatedAt: at, UpdatedAt: at}},
		{"empty lists",
			store.Workspace{Name: "e", Config: cfg, Running: []baton.SessionID{}, CreatedAt: at, UpdatedAt: at},
			store.Reservation{UpdatedAt: at},
			store.Handoff{RequestID: "r", State: store.StateGenerating, History: []store.AttemptRecord{},
				CreatedAt: at, UpdatedAt: at}},
		{"lists",
			store.Workspace{Name: "l", Config: cfg, Running: []baton.SessionID{"s-1", "s-2"}, CreatedAt: at, UpdatedAt: at},
			store.Reservation{Held: true, UpdatedAt: at.UTC()},
			store.Handoff{RequestID: "r", State: store.StateGenerating, Attempt: 2, CreatedAt: at, UpdatedAt: at,
				History: []store.AttemptRecord{{Attempt: 1, TargetSession: "s-2", Outcome: store.StateGenerating,
					Error: "é <x>", EndedAt: at}, {Attempt: 2, EndedAt: at.In(time.UTC)}}}},
		{"invalid UTF-8 in a JSON column",
			store.Workspace{Name: "u", Config: baton.EngineConfig{Engine: "demo", Model: "bad \xff"}, CreatedAt: at, UpdatedAt: at},
			store.Reservation{UpdatedAt: at},
			store.Handoff{RequestID: "r", State: store.StateGenerating, TargetConfig: baton.EngineConfig{Account: "\xfe"},
				CreatedAt: at, UpdatedAt: at}},
	}
	sameTime := cmp.Comparer(func(x, y time.Time) bool {
		return x.Equal(y) && x.Location().String() == y.Location().String() && x.Format(time.RFC3339Nano) == y.Format(time.RFC3339Nano)
	})
	// The first run of each statement on the connection also prepares it
	// (a round trip of its own): run the first case twice.
	tests = append(tests[:1], tests...)
	tests[0].name = "warm-up"
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := baton.WorkspaceID(fmt.Sprint("ws-", i))
			tt.ws.ID, tt.r.Workspace, tt.h.Workspace = ws, ws, ws
			tt.h.ID = baton.HandoffID("h-" + ws)
			// Inserted, then written again: the cache holds what the second
			// Update wrote.
			update(t, a, func(tx store.Tx) error {
				return errors.Join(tx.InsertWorkspace(tt.ws), tx.PutReservation(tt.r), tx.InsertHandoff(tt.h))
			})
			update(t, a, func(tx store.Tx) error {
				tt.ws.Mission, tt.r.Epoch, tt.h.Error = "again", tt.r.Epoch+1, "again"
				return errors.Join(tx.PutWorkspace(tt.ws), tx.PutReservation(tt.r), tx.PutHandoff(tt.h))
			})
			type rows struct {
				W store.Workspace
				R store.Reservation
				H store.Handoff
			}
			read := func(into *rows) func(tx store.Tx) error {
				return func(tx store.Tx) error {
					var err1, err2, err3 error
					into.W, err1 = tx.GetWorkspace(ws)
					into.R, err2 = tx.GetReservation(ws)
					into.H, err3 = tx.GetHandoff(tt.h.ID)
					return errors.Join(err1, err2, err3)
				}
			}
			var cached, server rows
			before := proxy.trips.Load()
			update(t, a, read(&cached))
			trips := proxy.trips.Load() - before
			if err := a.View(t.Context(), read(&server)); err != nil {
				t.Fatal(err)
			}
			if tt.name == "warm-up" {
				return
			}
			if diff := cmp.Diff(server, cached, sameTime); diff != "" {
				t.Errorf("an Update's reads differ from a View's (-view +update):\n%s", diff)
			}
			// The rows came from the cache, except those whose JSON
			// column does not read back as written.
			if fromServer := tt.name == "invalid UTF-8 in a JSON column"; fromServer != (trips > 1) || trips == 0 {
				t.Errorf("the reading Update took %d round trips, want %s", trips, map[bool]string{true: "more than 1", false: "1"}[fromServer])
			}
		})
	}
}

// TestEngineConfigFieldsKnown guards configAsRead (rowcache.go), which
// checks every field of baton.EngineConfig: a new field must be added
// there (a string field with invalid UTF-8 does not read back as written).
func TestEngineConfigFieldsKnown(t *testing.T) {
	typ := reflect.TypeFor[baton.EngineConfig]()
	var got []string
	for i := range typ.NumField() {
		got = append(got, typ.Field(i).Name+" "+typ.Field(i).Type.String())
	}
	want := []string{"Engine string", "Model string", "ReasoningEffort string", "PermissionMode string", "Account string"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("baton.EngineConfig's fields changed: update configAsRead in rowcache.go, then this list (-want +got):\n%s", diff)
	}
}

// TestCachedReadBesideWrite: an Update takes a workspace and its
// reservation from the row cache and writes only the workspace (whose
// write carries the workspace's check). When another store changed the
// reservation meanwhile, the Update must run again on its new value
// before it commits, and the rerun is not a lost serialization race (A
// never retries those here).
func TestCachedReadBesideWrite(t *testing.T) {
	schema := freshSchema(t)
	a := open(t, schema, pgstore.Options{MaxConflictRetries: -1})
	b := open(t, schema, pgstore.Options{})
	const ws = baton.WorkspaceID("ws-1")
	now := time.Now()
	update(t, a, func(tx store.Tx) error {
		return errors.Join(
			tx.InsertWorkspace(store.Workspace{ID: ws, Name: "a", CreatedAt: now, UpdatedAt: now}),
			tx.PutReservation(store.Reservation{Workspace: ws, Held: true, Epoch: 1, UpdatedAt: now}))
	})
	var epochs []int64
	copyEpoch := func(tx store.Tx) error {
		w, err := tx.GetWorkspace(ws)
		if err != nil {
			return err
		}
		r, err := tx.GetReservation(ws)
		if err != nil {
			return err
		}
		epochs = append(epochs, r.Epoch)
		w.Name = fmt.Sprint("epoch ", r.Epoch)
		return tx.PutWorkspace(w)
	}
	update(t, a, copyEpoch) // both rows are in A's cache now
	for _, epoch := range []int64{2, 3} {
		update(t, b, func(tx store.Tx) error {
			r, err := tx.GetReservation(ws)
			if err != nil {
				return err
			}
			r.Epoch = epoch
			return tx.PutReservation(r)
		})
		epochs = nil
		update(t, a, copyEpoch)
		if diff := cmp.Diff([]int64{epoch - 1, epoch}, epochs); diff != "" {
			t.Errorf("epochs seen by A's runs (-want +got):\n%s", diff)
		}
		var got store.Workspace
		if err := b.View(t.Context(), func(tx store.Tx) (err error) { got, err = tx.GetWorkspace(ws); return err }); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint("epoch ", epoch); got.Name != want {
			t.Errorf("workspace name %q, want %q", got.Name, want)
		}
	}
}
