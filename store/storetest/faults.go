package storetest

import (
	"context"
	"fmt"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// ErrInjected is the error a FaultStore injects. It matches
// baton.ErrUnavailable, as a store that cannot write returns.
var ErrInjected = baton.NewError(baton.ErrUnavailable, "storetest: injected store fault")

// FaultStore wraps a store.Store and makes its writes or commits fail on
// demand, so that a test can show that code built on a store stays
// consistent when the store fails, and that the error reaches its caller.
// Without a fault armed it is the wrapped store (NewFaultStore of a
// conforming store passes Run).
//
// A write is a call of one of the Put… methods of store.Tx,
// counted across transactions from the moment a fault is armed. A failed
// write returns an error matching ErrInjected and changes nothing; as with
// a real storage failure, its transaction can no longer commit: if the
// function given to Update ignores the error and returns nil, Update
// returns the injected error and keeps none of the transaction's writes.
//
// FaultStore does not forward optional capabilities (store.Notifier,
// Incarnation) of the wrapped store. It is safe for concurrent use.
type FaultStore struct {
	inner store.Store

	mu sync.Mutex
	// writes counts writes since the last arming; failAt is the write
	// that fails (0: none) and sticky makes every later one fail too.
	writes, failAt int
	sticky         bool
	// commits counts Updates that reached their commit since the last
	// arming; failCommitAt is the one that fails (0: none), after
	// committing if afterCommit.
	commits, failCommitAt int
	afterCommit           bool
}

// NewFaultStore wraps s, with no fault armed.
func NewFaultStore(s store.Store) *FaultStore { return &FaultStore{inner: s} }

// FailWrite arms a write fault: the nth write from now fails (n >= 1), and
// with sticky every write after it too, until Heal. It replaces any write
// fault armed before.
func (f *FaultStore) FailWrite(n int, sticky bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes, f.failAt, f.sticky = 0, max(n, 1), sticky
}

// FailCommit arms a commit fault: the nth Update from now whose function
// returns nil (n >= 1) fails instead of committing: it keeps none of its
// writes and returns an error matching ErrInjected.
func (f *FaultStore) FailCommit(n int) { f.armCommit(n, false) }

// FailAfterCommit arms an ambiguous commit: the nth Update from now whose
// function returns nil (n >= 1) commits, then returns an error matching
// ErrInjected, as a store that lost its connection or its sync after the
// commit does. The caller cannot tell that it committed.
func (f *FaultStore) FailAfterCommit(n int) { f.armCommit(n, true) }

func (f *FaultStore) armCommit(n int, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits, f.failCommitAt, f.afterCommit = 0, max(n, 1), after
}

// Heal disarms every fault.
func (f *FaultStore) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failAt, f.sticky, f.failCommitAt = 0, false, 0
}

// Writes returns how many writes were made (or refused) since a write
// fault was last armed, or since NewFaultStore. After a dry run of an
// operation it says how many writes it makes: FailWrite(k) for k from 1
// to that count, each on a fresh store, fails each of them in turn.
func (f *FaultStore) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// write counts one write and reports the injected error if it fails.
func (f *FaultStore) write(op string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.failAt > 0 && (f.writes == f.failAt || (f.sticky && f.writes > f.failAt)) {
		return baton.Errorf(ErrInjected, "storetest: %s: write %d", op, f.writes)
	}
	return nil
}

// commit counts one commit and reports how it fails (if it does).
func (f *FaultStore) commit() (fail, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commits++
	if f.failCommitAt > 0 && f.commits == f.failCommitAt {
		return true, f.afterCommit
	}
	return false, false
}

// Update runs fn in the wrapped store's Update, through a Tx that injects
// the armed write faults, and injects the armed commit fault. With a
// backend that re-runs fn after a serialization conflict, each run counts
// its writes, and each run that reaches its commit counts as a commit.
func (f *FaultStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if fn == nil {
		return f.inner.Update(ctx, nil)
	}
	var failAfter bool
	err := f.inner.Update(ctx, func(tx store.Tx) error {
		failAfter = false
		ft := &faultTx{Tx: tx, f: f}
		if err := fn(ft); err != nil {
			return err
		}
		if ft.failed != nil {
			return ft.failed
		}
		fail, after := f.commit()
		if fail && !after {
			return baton.Errorf(ErrInjected, "storetest: commit %d refused", f.commitCount())
		}
		failAfter = fail
		return nil
	})
	if err == nil && failAfter {
		return baton.Errorf(ErrInjected, "storetest: commit %d failed after it committed", f.commitCount())
	}
	return err
}

func (f *FaultStore) commitCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.commits
}

// View is the wrapped store's View (reads never fail).
func (f *FaultStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return f.inner.View(ctx, fn)
}

// Close closes the wrapped store.
func (f *FaultStore) Close() error { return f.inner.Close() }

// faultTx injects write faults; failed is the first one, which keeps the
// transaction from committing.
type faultTx struct {
	store.Tx
	f      *FaultStore
	failed error
}

func (t *faultTx) check(op string) error {
	if err := t.f.write(op); err != nil {
		if t.failed == nil {
			t.failed = err
		}
		return err
	}
	return nil
}

// do runs one write unless it is the one to fail.
func (t *faultTx) do(op string, write func() error) error {
	if err := t.check(op); err != nil {
		return err
	}
	return write()
}

func (t *faultTx) PutWorkspace(w store.Workspace) error {
	return t.do("PutWorkspace", func() error { return t.Tx.PutWorkspace(w) })
}

func (t *faultTx) PutSession(s store.Session) error {
	return t.do("PutSession", func() error { return t.Tx.PutSession(s) })
}

func (t *faultTx) PutHandoff(h store.Handoff) error {
	return t.do("PutHandoff", func() error { return t.Tx.PutHandoff(h) })
}

func (t *faultTx) PutReservation(r store.Reservation) error {
	return t.do("PutReservation", func() error { return t.Tx.PutReservation(r) })
}

func (t *faultTx) PutWakeup(w store.Wakeup) error {
	return t.do("PutWakeup", func() error { return t.Tx.PutWakeup(w) })
}

func (t *faultTx) PutContinuation(c store.Continuation) error {
	return t.do("PutContinuation", func() error { return t.Tx.PutContinuation(c) })
}

func (t *faultTx) PutLaunch(l store.Launch) error {
	return t.do("PutLaunch", func() error { return t.Tx.PutLaunch(l) })
}

func (t *faultTx) PutInstruction(i store.Instruction) error {
	return t.do("PutInstruction", func() error { return t.Tx.PutInstruction(i) })
}

var _ store.Store = (*FaultStore)(nil)

// String names the armed faults (for test logs).
func (f *FaultStore) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("FaultStore{write %d of %d (sticky %v), commit %d of %d (after %v)}",
		f.writes, f.failAt, f.sticky, f.commits, f.failCommitAt, f.afterCommit)
}
