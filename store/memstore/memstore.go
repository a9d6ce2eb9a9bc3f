package memstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/notify"
)

// pkg prefixes this package's error messages.
const pkg = "memstore"

// Store is an in-memory store.Store. Updates run one at a time; Views run
// concurrently with each other but never with an Update, so every
// transaction is serializable and every View sees a consistent snapshot.
//
// The zero Store is empty and ready to use; New returns one too. A Store
// must not be copied after first use.
type Store struct {
	mu     sync.RWMutex
	closed bool
	st     state
	subs   notify.Hub
}

// New returns an empty, open store. It needs no configuration.
func New() *Store { return &Store{} }

var (
	_ store.Store    = (*Store)(nil)
	_ store.Notifier = (*Store)(nil)
	_ store.Tx       = (*tx)(nil)
)

// Update runs fn in a read-write transaction and commits what fn wrote if fn
// returns nil. If fn returns an error or panics, every write fn made is undone
// before Update returns (or the panic goes on), and fn's error is returned as
// is. Update never retries: it holds the store's only write lock while fn
// runs, so fn is called exactly once.
//
// fn must not call Update or View on the same Store (directly or through
// another goroutine it waits for): that deadlocks. It must not keep the Tx:
// once fn returns, every Tx method returns store.ErrTxDone.
//
// Errors: an error wrapping ctx.Err() if ctx is done before fn starts (fn
// is not called); store.ErrClosed after Close; baton.ErrInvalid for a nil
// fn; otherwise fn's error.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if fn == nil {
		return baton.Errorf(baton.ErrInvalid, "memstore: Update: nil function")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: update: %w", err)
	}
	grown, err := s.update(ctx, fn)
	// Subscribers hear of a commit once it is visible, and never while
	// the write lock is held.
	s.subs.Notify(grown)
	return err
}

// update is Update under the write lock; it returns the workspaces whose
// change feed grew.
func (s *Store) update(ctx context.Context, fn func(store.Tx) error) ([]baton.WorkspaceID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, store.ErrClosed
	}
	// The lock may have taken a while: a context cancelled meanwhile still
	// keeps fn from running.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: update: %w", err)
	}
	t := &tx{st: &s.st, seq: s.st.seq}
	committed := false
	defer func() {
		if !committed {
			t.rollback()
		}
		t.done = true
	}()
	if err := fn(t); err != nil {
		return nil, err
	}
	committed = true
	return t.commit(), nil
}

// View runs fn in a read-only transaction over a consistent snapshot: no
// Update commits while fn runs. Every write method of the Tx returns an
// error matching baton.ErrInternal and changes nothing.
//
// fn must not call Update on the same Store (that deadlocks), nor View (a
// nested read lock deadlocks once an Update is waiting). It must not keep
// the Tx: once fn returns, every Tx method returns store.ErrTxDone.
//
// Errors: an error wrapping ctx.Err() if ctx is done before fn starts (fn
// is not called); store.ErrClosed after Close; baton.ErrInvalid for a nil
// fn; otherwise fn's error, as is.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if fn == nil {
		return baton.Errorf(baton.ErrInvalid, "memstore: View: nil function")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: view: %w", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: view: %w", err)
	}
	// Reading the (possibly nil) maps of a store never written is safe.
	t := &tx{st: &s.st, readOnly: true}
	defer func() { t.done = true }()
	return fn(t)
}

// Close waits for running transactions to end, then drops every record.
// Update, View and Close return store.ErrClosed afterwards. Close starts no
// goroutine and leaves none behind.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.closed = true
	s.st = state{}
	// Wake every subscriber once: what it reads next is store.ErrClosed.
	s.subs.WakeAll()
	return nil
}

// tx is both kinds of transaction. Writes change the committed state in
// place (no reader can see it: Update holds the write lock) and push their
// inverse on undo; a failed Update replays undo backwards, which restores
// every record and, through the same index-maintaining setters, every index.
type tx struct {
	st       *state
	readOnly bool
	done     bool
	seq      int64 // st.seq when the transaction began
	undo     []func()
	// changes are the feed entries the transaction appends if it commits,
	// keyed by record id: a baton.HandoffID, SessionID or InstructionID,
	// of distinct types, so that records of two kinds never share a key.
	changes backend.Changes[any, store.Change]
}

func (t *tx) rollback() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	t.undo = nil
	t.st.seq = t.seq
}

// readable returns store.ErrTxDone once the transaction is over.
func (t *tx) readable() error {
	if t.done {
		return store.ErrTxDone
	}
	return nil
}

// begin checks a Put: the transaction is writable and the record's keys
// (errs, see backend.Required) are set.
func (t *tx) begin(op string, errs ...error) error {
	return backend.Writable(t.readable(), !t.readOnly, pkg, op, errs...)
}

// onUndo records how to reverse the write about to be made.
func (t *tx) onUndo(f func()) { t.undo = append(t.undo, f) }
