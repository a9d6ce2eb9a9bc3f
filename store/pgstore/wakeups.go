package pgstore

import (
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var wakeups = newTable("wakeup", "wakeups",
	[]string{"id", "workspace", "session", "prompt", "at", "status", "reason", "created_at", "updated_at"},
	func(w *store.Wakeup) []any {
		return []any{&w.ID, &w.Workspace, &w.Session, &w.Prompt, &w.At, &w.Status, &w.Reason, &w.CreatedAt, &w.UpdatedAt}
	},
	func(w store.Wakeup) baton.WorkspaceID { return w.Workspace })

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	return get(t, wakeups, string(id))
}

// PutWakeup inserts or replaces w; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutWakeup(w store.Wakeup) error {
	return putChecked(t, wakeups, "PutWakeup", string(w.ID), w)
}

// ListWakeups returns the wakeups of ws ordered by (At, ID); with pinned
// != "" only those pinned to it, from the index by session.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if pinned == "" {
		return list(t, wakeups, ws, "WHERE workspace = $1 ORDER BY at, id", string(ws))
	}
	return list(t, wakeups, ws, "WHERE session = $2 AND workspace = $1 ORDER BY at, id", string(ws), string(pinned))
}

// DueWakeups returns the pending wakeups with At <= now ordered by (At,
// ID), at most limit (limit <= 0: all), from the index of pending wakeups.
func (t *tx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	if limit <= 0 {
		return list(t, wakeups, "", "WHERE status = 'pending' AND at <= $1 ORDER BY at, id", now)
	}
	return list(t, wakeups, "", "WHERE status = 'pending' AND at <= $1 ORDER BY at, id LIMIT $2", now, limit)
}
