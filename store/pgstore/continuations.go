package pgstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var continuations = newTable("continuation", "continuations",
	[]string{"id", "workspace", "session", "task", "ending", "prompt", "target", "automated", "state", "reason",
		"created_at", "updated_at"},
	func(c *store.Continuation) []any {
		return []any{&c.ID, &c.Workspace, &c.Session, &c.Task, &c.Ending, &c.Prompt, &c.Target, &c.Automated,
			&c.State, &c.Reason, &c.CreatedAt, &c.UpdatedAt}
	},
	func(c store.Continuation) baton.WorkspaceID { return c.Workspace })

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	return get(t, continuations, string(id))
}

// PutContinuation inserts or replaces c; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutContinuation(c store.Continuation) error {
	return putChecked(t, continuations, "PutContinuation", string(c.ID), c)
}

// QueuedContinuations returns the queued continuations of every workspace,
// oldest first, from the index of queued ones.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	return list(t, continuations, "", "WHERE state = 'queued' ORDER BY ord")
}

// ListContinuations returns the continuations of ws, oldest first.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	return list(t, continuations, ws, "WHERE workspace = $1 ORDER BY ord", string(ws))
}
