// Package backend holds what the store backends (memstore, badgerstore,
// pgstore) would otherwise each repeat: the checks that begin a Tx
// method, the errors of the store contract's rules with one wording, the
// change feed a transaction collects, and the options and pause of a
// retried Update.
package backend

import (
	"context"
	"iter"
	"math/rand/v2"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// Required refuses an empty key field of a record of kind (baton.ErrInvalid):
// such a record could never be read back by its id and would collide with
// every other empty one. pkg names the backend in the message.
func Required[K ~string](pkg, kind, field string, k K) error {
	if k == "" {
		return baton.Errorf(baton.ErrInvalid, "%s: %s: %s is empty", pkg, kind, field)
	}
	return nil
}

// FirstErr returns the first non-nil error of errs, the checks of a
// record's keys (every argument is evaluated: checks without side effects
// only).
func FirstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// NotFound is store.ErrNotFound for the record id of kind.
func NotFound[K ~string](pkg, kind string, id K) error {
	return baton.Errorf(store.ErrNotFound, "%s: %s %q", pkg, kind, string(id))
}

// Writable begins the write op of a Tx: readErr is the Tx's own check
// that it may still be used, returned as is; a write in a View (update
// false) is refused with baton.ErrInternal (a bug of the caller); then the
// first failed check of the record's keys is returned (see Required).
func Writable(readErr error, update bool, pkg, op string, checks ...error) error {
	if readErr != nil {
		return readErr
	}
	if !update {
		return baton.Errorf(baton.ErrInternal, "%s: %s in a read-only transaction", pkg, op)
	}
	return FirstErr(checks...)
}

// KeysChanged refuses a PutHandoff of h that would change the workspace
// or request id of the stored cur (baton.ErrInvalid).
func KeysChanged(pkg string, h, cur store.Handoff) error {
	return baton.Errorf(baton.ErrInvalid, "%s: PutHandoff %q: workspace and request id cannot change (stored %q/%q, given %q/%q)",
		pkg, h.ID, cur.Workspace, cur.RequestID, h.Workspace, h.RequestID)
}

// RequestTaken refuses h, whose (workspace, request id) is held by the
// handoff holder (store.ErrDuplicate).
func RequestTaken[K ~string](pkg string, h store.Handoff, holder K) error {
	return baton.Errorf(store.ErrDuplicate, "%s: request id %q of workspace %q is taken by handoff %q",
		pkg, h.RequestID, h.Workspace, string(holder))
}

// SlotTaken refuses the pending h while the handoff holder holds the
// pending slot of its workspace (store.ErrDuplicate).
func SlotTaken[K ~string](pkg string, h store.Handoff, holder K) error {
	return baton.Errorf(store.ErrDuplicate, "%s: workspace %q already has pending handoff %q", pkg, h.Workspace, string(holder))
}

// DefaultRetries is how many times an Update is retried after a
// serialization conflict when the options say 0.
const DefaultRetries = 16

// Retries reads a MaxConflictRetries option: 0 means DefaultRetries, a
// negative number none.
func Retries(n int) int {
	switch {
	case n == 0:
		return DefaultRetries
	case n < 0:
		return 0
	}
	return n
}

// Pause waits a random time below limit before the retry of an Update,
// so that transactions that collided do not collide again in step; it
// returns ctx.Err() if ctx ends first.
func Pause(ctx context.Context, limit time.Duration) error {
	t := time.NewTimer(rand.N(limit) + 1)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Changes are the feed entries of one transaction, a V for each record
// written, keyed by K: the last value of each, in the order the records
// were first written (the store contract's one change per record).
type Changes[K comparable, V any] struct {
	order []K
	last  map[K]V
}

// Add notes v as the last value of the record k.
func (c *Changes[K, V]) Add(k K, v V) {
	if c.last == nil {
		c.last = map[K]V{}
	}
	if _, ok := c.last[k]; !ok {
		c.order = append(c.order, k)
	}
	c.last[k] = v
}

// Len is the number of records noted.
func (c *Changes[K, V]) Len() int { return len(c.order) }

// All yields the last value of each record, in the order first written.
func (c *Changes[K, V]) All() iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, k := range c.order {
			if !yield(c.last[k]) {
				return
			}
		}
	}
}
