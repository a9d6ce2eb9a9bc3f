package pgstore

import (
	"encoding/json"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// rowCache is a Store's cache of the committed rows its Updates read and
// write most: workspaces, reservations and pending handoffs, each with
// the row version the server gave it (migration 0004). It is shared by
// the Store's Updates, in any goroutine. A row read holds what the server
// returned; a row written holds what a read of it would return (asRead
// below: times to the microsecond in UTC, JSON columns as their JSON
// encoding decodes), with the version the write returned.
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
		if r.value == nil { // a row written that asRead could not tell
			delete(c.rows, k)
			continue
		}
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

// workspaceAsRead returns w as a read of its row returns it, if it can
// tell (see configAsRead).
func workspaceAsRead(w store.Workspace) (store.Workspace, bool) {
	w.CreatedAt, w.UpdatedAt = stored(w.CreatedAt), stored(w.UpdatedAt)
	if len(w.Running) == 0 {
		w.Running = nil // an empty text[] scans as nil
	} else {
		w.Running = slices.Clone(w.Running)
	}
	return w, configAsRead(w.Config)
}

// reservationAsRead returns r as a read of its row returns it.
func reservationAsRead(r store.Reservation) (store.Reservation, bool) {
	r.LeaseExpires, r.UpdatedAt = stored(r.LeaseExpires), stored(r.UpdatedAt)
	return r, true
}

// handoffAsRead returns h as a read of its row returns it, if it can tell
// (see configAsRead). History, a jsonb column, reads as its JSON encoding
// decodes.
func handoffAsRead(h store.Handoff) (store.Handoff, bool) {
	h.GenerationDeadline, h.CreatedAt, h.UpdatedAt = stored(h.GenerationDeadline), stored(h.CreatedAt), stored(h.UpdatedAt)
	if len(h.History) > 0 {
		b, err := json.Marshal(h.History)
		if err != nil {
			return h, false
		}
		h.History = nil
		if err := json.Unmarshal(b, &h.History); err != nil {
			return h, false
		}
	} else if h.History != nil {
		h.History = []store.AttemptRecord{} // "[]", not "null"
	}
	return h, configAsRead(h.SourceConfig) && configAsRead(h.TargetConfig)
}

// configAsRead reports whether an engine configuration, a jsonb column,
// reads back as written: its strings, all of its fields, are valid UTF-8
// (the JSON encoding replaces invalid bytes).
func configAsRead(c baton.EngineConfig) bool {
	return utf8.ValidString(c.Engine) && utf8.ValidString(c.Model) && utf8.ValidString(c.ReasoningEffort) &&
		utf8.ValidString(c.PermissionMode) && utf8.ValidString(c.Account)
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
