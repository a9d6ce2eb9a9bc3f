package pgstore

import (
	"slices"
	"sync"

	"github.com/batonhq/baton/store"
)

// rowCache is a Store's cache of the committed rows its Updates read and
// write most: workspaces, reservations and pending handoffs, each with
// the row version the server gave it (migration 0004). It is shared by
// the Store's Updates, in any goroutine.
//
// An entry may be stale (another Store, in this process or another, wrote
// the row since): a transaction that answers a read from it records the
// version it assumed, and its next statement batch checks it on the
// server first (checkSQL in tx.go). An entry is only ever a guess; the
// check makes it safe. So the cache needs no coherence protocol, only
// these rules: it takes rows a committed transaction read or wrote, as
// the server returned them, keeping the higher version of two (a row's
// versions grow); it drops the rows a transaction that did not commit
// touched; and it holds at most limit rows, dropping an arbitrary one to
// make room, and no settled handoff (those are rarely read again by an
// Update).
type rowCache struct {
	limit int

	mu   sync.Mutex
	rows map[recordKey]cachedRow
}

// cachedRow is a row as the server returned it and its version. value is
// a store.Workspace, store.Reservation or store.Handoff, which the holder
// of the cachedRow owns (its slices are its own).
type cachedRow struct {
	value   any
	version int64
}

// newRowCache returns a cache of at most limit rows, nil if limit <= 0.
func newRowCache(limit int) *rowCache {
	if limit <= 0 {
		return nil
	}
	return &rowCache{limit: limit, rows: map[recordKey]cachedRow{}}
}

// get returns a copy of the row k, which the caller owns.
func (c *rowCache) get(k recordKey) (cachedRow, bool) {
	if c == nil {
		return cachedRow{}, false
	}
	c.mu.Lock()
	r, ok := c.rows[k]
	c.mu.Unlock()
	if ok {
		r.value = cloneRow(r.value)
	}
	return r, ok
}

// has reports whether row k is cached: then it exists (rows are never
// deleted), whatever its version.
func (c *rowCache) has(k recordKey) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.rows[k]
	return ok
}

// put takes the rows of a committed transaction, which it hands over.
func (c *rowCache) put(rows map[recordKey]cachedRow) {
	if c == nil || len(rows) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, r := range rows {
		if h, ok := r.value.(store.Handoff); ok && !h.State.Pending() {
			delete(c.rows, k)
			continue
		}
		old, ok := c.rows[k]
		switch {
		case ok && old.version > r.version:
			continue // a later commit's row is there already
		case !ok && len(c.rows) >= c.limit:
			for victim := range c.rows { // an arbitrary one
				delete(c.rows, victim)
				break
			}
		}
		c.rows[k] = r
	}
}

// drop forgets the rows keys.
func (c *rowCache) drop(keys []recordKey) {
	if c == nil || len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.rows, k)
	}
}

// len returns the number of cached rows.
func (c *rowCache) len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.rows)
}

// cloneRow returns v with slices of its own.
func cloneRow(v any) any {
	switch r := v.(type) {
	case store.Workspace:
		r.Running = slices.Clone(r.Running)
		return r
	case store.Handoff:
		r.History = slices.Clone(r.History)
		return r
	}
	return v
}
