package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/notify"
	"github.com/batonhq/baton/store/memstore"
)

// A mutant is memstore with one rule broken. TestMutantsFail runs the one
// subtest of Run meant to catch each mutant, in a child process (a failing
// *testing.T cannot be contained in-process), and requires that it fail.

const mutantEnv = "BATON_STORETEST_MUTANT"

var mutants = []struct {
	name, subtest string
	pass          bool // a control: the subtest must pass
}{
	{"", "Atomicity/FailedUpdateLeavesNothing", true}, // control: the real memstore passes
	{"wrap-fn-error", "Atomicity/FnErrorReturnedAsIs", false},
	{"commit-on-error", "Atomicity/FailedUpdateLeavesNothing", false},
	{"read-then-write", "Isolation/ConcurrentIncrements", false},
	{"writable-view", "Isolation/ViewIsReadOnly", false},
	{"sticky-pending-list", "Handoffs/PendingLifecycle", false},
	{"reversed-sessions", "Indexes/SessionsInCreationOrder", false},
	{"due-ignores-limit", "Indexes/DueWakeups", false},
	{"plain-not-found", "Errors/GettersNotFound", false},
	{"accepts-empty-key", "Errors/EmptyKeysInvalid", false},
	{"noop-close", "Errors/Closed", false},
	{"ignores-context", "Errors/DoneContext", false},
	{"drops-mission", "Values/FullRecordsRoundTrip", false},
	{"shares-history", "Values/RecordsAreValues", false},

	// Launches, instructions and the new record fields.
	{"sticky-live-launches", "Indexes/LiveLaunches", false},
	{"live-launches-ignore-workspace", "Indexes/LiveLaunches", false},
	{"reversed-instructions", "Indexes/Instructions", false},
	{"drops-native", "Values/FullRecordsRoundTrip", false},
	{"drops-facts", "Values/FullRecordsRoundTrip", false},
	{"drops-wakeup-reason", "Values/FullRecordsRoundTrip", false},
	{"drops-lease-store", "Values/FullRecordsRoundTrip", false},
	{"drops-launch-epoch", "Values/FullRecordsRoundTrip", false},
	{"drops-instruction-session", "Values/FullRecordsRoundTrip", false},

	// The change feed: the mutant's own feed, right but for one rule.
	{"feed-control", "Feed/Numbering", true},
	{"feed-control", "Feed/OneChangePerRecord", true},
	{"feed-control", "Feed/OnlyFeedKinds", true},
	{"feed-control", "Feed/RollbackLeavesNoChange", true},
	{"feed-control", "Feed/OwnChangesNotListed", true},
	{"feed-control", "Feed/Paging", true},
	{"feed-control", "Feed/ChangesAreValues", true},
	{"feed-global-seq", "Feed/Numbering", false},
	{"feed-change-per-write", "Feed/OneChangePerRecord", false},
	{"feed-first-value", "Feed/OneChangePerRecord", false},
	{"feed-for-other-kinds", "Feed/OnlyFeedKinds", false},
	{"feed-keeps-rolled-back", "Feed/RollbackLeavesNoChange", false},
	{"feed-lists-own", "Feed/OwnChangesNotListed", false},
	{"feed-ignores-after", "Feed/Paging", false},
	{"feed-ignores-limit", "Feed/Paging", false},
	{"feed-shares-changes", "Feed/ChangesAreValues", false},

	// Notifier: the mutant's own notifications.
	{"notify-control", "Feed/Notifier", true},
	{"notify-never", "Feed/Notifier", false},
	{"notify-on-write", "Feed/Notifier", false},
	{"notify-on-rollback", "Feed/Notifier", false},
	{"notify-ignores-workspace", "Feed/Notifier", false},
}

func TestMutantsFail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, m := range mutants {
		name := m.name
		if name == "" {
			name = "control"
		}
		t.Run(name+"/"+m.subtest, func(t *testing.T) {
			t.Parallel()
			group, c, _ := strings.Cut(m.subtest, "/")
			cmd := exec.CommandContext(t.Context(), os.Args[0],
				"-test.run=^TestMutantChild$/^"+group+"$/^"+c+"$", "-test.v", "-test.count=1")
			// GORACE: a race-enabled child otherwise sleeps a second before
			// a successful exit.
			cmd.Env = append(os.Environ(), mutantEnv+"="+name, "GORACE=atexit_sleep_ms=0")
			out, err := cmd.CombinedOutput()
			want := "--- FAIL: TestMutantChild/" + m.subtest
			if m.pass {
				want = "--- PASS: TestMutantChild/" + m.subtest
				if err != nil {
					t.Fatalf("control %q failed %s: %v\n%s", name, m.subtest, err, out)
				}
			} else if err == nil {
				t.Fatalf("%s passed against mutant %q, which breaks the rule it checks:\n%s", m.subtest, m.name, out)
			}
			if !strings.Contains(string(out), want) {
				t.Fatalf("child output lacks %q:\n%s", want, out)
			}
		})
	}
}

// TestMutantChild runs the suite against the mutant named in the
// environment; it is skipped in a normal run.
func TestMutantChild(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("run by TestMutantsFail only")
	}
	Run(t, func(t *testing.T) store.Store {
		inner := memstore.New()
		t.Cleanup(func() { _ = inner.Close() })
		if name == "control" {
			return inner
		}
		return &mutant{Store: inner, name: name, cache: map[baton.HandoffID]store.Handoff{}}
	})
}

type mutant struct {
	store.Store
	name string

	// commitMu orders the Updates of feed and notify mutants, so that
	// their own feed follows commit order.
	commitMu  sync.Mutex
	feed      map[baton.WorkspaceID][]store.Change // feed mutants, under mu
	globalSeq int64                                // feed-global-seq, under mu
	launches  []baton.LaunchID                     // sticky-live-launches, under mu
	hub       notify.Hub                           // notify mutants

	mu      sync.Mutex
	cache   map[baton.HandoffID]store.Handoff // shares-history
	pending map[baton.HandoffID]bool          // sticky-pending-list
	held    int                               // read-then-write: Updates held at the barrier
	barrier chan struct{}
}

func (m *mutant) Update(ctx context.Context, fn func(store.Tx) error) error {
	if m.isFeedMutant() || m.isNotifyMutant() {
		return m.ownUpdate(ctx, fn)
	}
	switch m.name {
	case "wrap-fn-error":
		if err := m.Store.Update(ctx, m.wrap(fn)); err != nil {
			return fmt.Errorf("mutant: %w", err)
		}
		return nil
	case "commit-on-error":
		var fnErr error
		if err := m.Store.Update(ctx, func(tx store.Tx) error { fnErr = m.wrap(fn)(tx); return nil }); err != nil {
			return err
		}
		return fnErr
	case "read-then-write":
		return m.readThenWrite(ctx, fn)
	case "ignores-context":
		return m.Store.Update(context.Background(), m.wrap(fn))
	}
	return m.Store.Update(ctx, m.wrap(fn))
}

func (m *mutant) View(ctx context.Context, fn func(store.Tx) error) error {
	switch m.name {
	case "writable-view":
		return m.Store.Update(ctx, m.wrap(fn))
	case "ignores-context":
		return m.Store.View(context.Background(), m.wrap(fn))
	}
	return m.Store.View(ctx, m.wrap(fn))
}

func (m *mutant) Close() error {
	if m.name == "noop-close" {
		return nil
	}
	return m.Store.Close()
}

func (m *mutant) wrap(fn func(store.Tx) error) func(store.Tx) error {
	return func(tx store.Tx) error { return fn(&mutantTx{Tx: tx, m: m}) }
}

// readThenWrite runs fn's reads in one View and its writes in a later
// Update: the classic lost update. The first `writers` Updates that read a
// workspace wait for each other between the two, so they all read the same
// counter, and the loss is certain rather than likely.
func (m *mutant) readThenWrite(ctx context.Context, fn func(store.Tx) error) error {
	var writes []func(store.Tx) error
	read := false
	err := m.Store.View(ctx, func(tx store.Tx) error {
		return fn(&recordingTx{Tx: tx, writes: &writes, read: &read})
	})
	if err != nil {
		return err
	}
	if read {
		m.mu.Lock()
		if m.barrier == nil {
			m.barrier = make(chan struct{})
		}
		b := m.barrier
		if m.held++; m.held == writers {
			close(b)
		}
		m.mu.Unlock()
		select {
		case <-b:
		case <-time.After(10 * time.Second): // not a wait for a state: a bound on a broken child
		}
	}
	return m.Store.Update(ctx, func(tx store.Tx) error {
		for _, w := range writes {
			if err := w(tx); err != nil {
				return err
			}
		}
		return nil
	})
}

type recordingTx struct {
	store.Tx
	writes *[]func(store.Tx) error
	read   *bool
}

func (r *recordingTx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	*r.read = true
	return r.Tx.GetWorkspace(id)
}

func (r *recordingTx) PutWorkspace(w store.Workspace) error {
	*r.writes = append(*r.writes, func(tx store.Tx) error { return tx.PutWorkspace(w) })
	return nil
}

type mutantTx struct {
	store.Tx
	m *mutant
	p *mutantPending // what an Update of a feed or notify mutant wrote; nil otherwise
}

func (t *mutantTx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	w, err := t.Tx.GetWorkspace(id)
	switch {
	case t.m.name == "plain-not-found" && errors.Is(err, store.ErrNotFound):
		return w, errors.New("no such workspace")
	case t.m.name == "drops-mission":
		w.Mission = ""
	}
	return w, err
}

func (t *mutantTx) PutReservation(r store.Reservation) error {
	if t.m.name == "accepts-empty-key" && r.Workspace == "" {
		return nil
	}
	return t.Tx.PutReservation(r)
}

func (t *mutantTx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	l, err := t.Tx.ListSessions(ws)
	if t.m.name == "reversed-sessions" {
		slices.Reverse(l)
	}
	return l, err
}

func (t *mutantTx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	if t.m.name == "due-ignores-limit" {
		limit = 0
	}
	return t.Tx.DueWakeups(now, limit)
}

func (t *mutantTx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	if t.m.name != "shares-history" {
		h, err := t.Tx.GetHandoff(id)
		return t.m.dropHandoffFields(h), err
	}
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	if h, ok := t.m.cache[id]; ok {
		return h, nil
	}
	h, err := t.Tx.GetHandoff(id)
	if err == nil {
		t.m.cache[id] = h
	}
	return h, err
}

func (t *mutantTx) PutHandoff(h store.Handoff) error {
	t.forget(h)
	err := t.Tx.PutHandoff(h)
	if err == nil {
		t.record("handoff", string(h.ID))
	}
	return err
}

// forget drops h from the shares-history cache and remembers it in the
// sticky pending list if it is pending.
func (t *mutantTx) forget(h store.Handoff) {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	delete(t.m.cache, h.ID)
	if h.State.Pending() {
		if t.m.pending == nil {
			t.m.pending = map[baton.HandoffID]bool{}
		}
		t.m.pending[h.ID] = true
	}
}

func (t *mutantTx) PendingHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if t.m.name != "sticky-pending-list" || ws != "" {
		return t.Tx.PendingHandoffs(ws)
	}
	t.m.mu.Lock()
	ids := make([]baton.HandoffID, 0, len(t.m.pending))
	for id := range t.m.pending {
		ids = append(ids, id)
	}
	t.m.mu.Unlock()
	var out []store.Handoff
	for _, id := range ids {
		h, err := t.Tx.GetHandoff(id)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}
