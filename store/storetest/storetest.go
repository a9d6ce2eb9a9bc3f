package storetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// Run runs the conformance suite: one subtest per property, grouped by
// concern (Atomicity, Isolation, Handoffs, Indexes, Errors, Values), each on
// a fresh store from newStore.
//
// newStore must return an empty, open store and register its own cleanup
// (t.Cleanup) that closes it and frees what it holds. Some subtests close the
// store themselves, so that cleanup must accept a second Close returning nil
// or store.ErrClosed. The subtests run one after another (never in
// parallel), so backends that share a server may reset it in newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Helper()
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					s := newStore(t)
					if s == nil {
						t.Fatal("newStore returned nil")
					}
					c.fn(t, s)
				})
			}
		})
	}
}

type testCase struct {
	name string
	fn   func(t *testing.T, s store.Store)
}

var groups = []struct {
	name  string
	cases []testCase
}{
	{"Atomicity", atomicityTests},
	{"Isolation", isolationTests},
	{"Handoffs", handoffTests},
	{"Indexes", indexTests},
	{"Errors", errorTests},
	{"Values", valueTests},
	{"Feed", feedTests},
}

// Update runs fn in s.Update with t.Context() and fails the test (Fatal) if
// it returns an error. Call it from the test's goroutine.
func Update(t testing.TB, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// View runs fn in s.View with t.Context() and fails the test (Fatal) if it
// returns an error. Call it from the test's goroutine.
func View(t testing.TB, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// Diff compares two records, lists of records or Snapshots as a backend
// may return them: times by instant (time.Time.Equal, so location and
// monotonic reading do not count) and a nil slice equal to an empty one. It
// returns "" when they are equal, else a go-cmp diff (-want +got).
func Diff(want, got any) string {
	if reflect.DeepEqual(want, got) { // fast path: deep equality implies equality here
		return ""
	}
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

// maxConflictRetries bounds how often the suite retries an Update that
// returned store.ErrTxConflict, which the contract says is safe to retry.
const maxConflictRetries = 100

// update is s.Update, retried on store.ErrTxConflict.
func update(ctx context.Context, s store.Store, fn func(store.Tx) error) error {
	for i := 0; ; i++ {
		err := s.Update(ctx, fn)
		if !errors.Is(err, store.ErrTxConflict) || i == maxConflictRetries {
			return err
		}
	}
}

// wantErr reports a test error unless err matches every one of want.
func wantErr(t *testing.T, op string, err error, want ...error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: err = nil, want %v", op, want[0])
		return
	}
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("%s: err = %v, want errors.Is(err, %v)", op, err, w)
		}
	}
}

// wantNotFound reports a test error unless err is a store.ErrNotFound that
// also matches the root code.
func wantNotFound(t *testing.T, op string, err error) {
	t.Helper()
	wantErr(t, op, err, store.ErrNotFound, baton.ErrNotFound)
}

// diff reports a test error when want and got differ (see Diff).
func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := Diff(want, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

// epoch is the suite's base time. Its precision is a microsecond, the finest
// a PostgreSQL timestamp keeps, so that every backend can round-trip it.
var epoch = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

// at returns epoch plus i seconds.
func at(i int) time.Time { return epoch.Add(time.Duration(i) * time.Second) }

func workspace(id baton.WorkspaceID) store.Workspace {
	return store.Workspace{
		ID:        id,
		Name:      "workspace " + string(id),
		Config:    baton.EngineConfig{Engine: "demo"},
		CreatedAt: at(0),
		UpdatedAt: at(0),
	}
}

func session(ws baton.WorkspaceID, id baton.SessionID) store.Session {
	return store.Session{
		ID:        id,
		Workspace: ws,
		Config:    baton.EngineConfig{Engine: "demo"},
		Status:    store.SessionIdle,
		CreatedAt: at(1),
	}
}

func handoff(ws baton.WorkspaceID, id baton.HandoffID, requestID string, state store.HandoffState) store.Handoff {
	return store.Handoff{
		ID:           id,
		Workspace:    ws,
		RequestID:    requestID,
		Fingerprint:  "fp-" + requestID,
		State:        state,
		Attempt:      1,
		SourceConfig: baton.EngineConfig{Engine: "demo"},
		TargetConfig: baton.EngineConfig{Engine: "demo", Model: "big"},
		CreatedAt:    at(2),
		UpdatedAt:    at(2),
	}
}

func wakeup(ws baton.WorkspaceID, id baton.WakeupID, sess baton.SessionID, when time.Time, status store.WakeupStatus) store.Wakeup {
	return store.Wakeup{
		ID:        id,
		Workspace: ws,
		Session:   sess,
		Prompt:    "wake up " + string(id),
		At:        when,
		Status:    status,
		CreatedAt: at(3),
		UpdatedAt: at(3),
	}
}

func continuation(ws baton.WorkspaceID, id baton.ContinuationID, state store.ContinuationState) store.Continuation {
	return store.Continuation{
		ID:        id,
		Workspace: ws,
		Task:      "task of " + string(id),
		Prompt:    "go on",
		Target:    baton.EngineConfig{Engine: "demo"},
		State:     state,
		CreatedAt: at(4),
		UpdatedAt: at(4),
	}
}

// allHandoffStates lists every state, and the empty one.
var allHandoffStates = []store.HandoffState{
	"", store.StateStopping, store.StateGenerating, store.StateStarting,
	store.StateCompleted, store.StateFailed, store.StateInterrupted, store.StateCancelled,
}

// putSession puts s and returns it as stored (with the Seq the store gave).
func putSession(tx store.Tx, s store.Session) (store.Session, error) {
	if err := tx.PutSession(s); err != nil {
		return store.Session{}, err
	}
	return tx.GetSession(s.ID)
}
