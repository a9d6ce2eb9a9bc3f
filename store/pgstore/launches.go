package pgstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var launches = newTable("launch", "launches",
	[]string{"id", "workspace", "session", "handoff", "attempt", "holder", "host", "engine", "epoch", "gone", "admitted",
		"end_reason", "created_at", "updated_at"},
	func(l *store.Launch) []any {
		return []any{&l.ID, &l.Workspace, &l.Session, &l.Handoff, &l.Attempt, &l.Holder, &l.Host, &l.Engine, &l.Epoch,
			&l.Gone, &l.Admitted, &l.EndReason, &l.CreatedAt, &l.UpdatedAt}
	},
	func(l store.Launch) baton.WorkspaceID { return l.Workspace })

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return get(t, launches, string(id))
}

// PutLaunch inserts or replaces l; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) PutLaunch(l store.Launch) error {
	return putChecked(t, launches, "PutLaunch", string(l.ID), l)
}

// LiveLaunches returns the live launches of every workspace (ws == "") or
// of ws, oldest first, from the partial indexes that hold only live ones.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	if ws == "" {
		return list(t, launches, "", "WHERE NOT gone ORDER BY ord")
	}
	return list(t, launches, ws, "WHERE workspace = $1 AND NOT gone ORDER BY ord", string(ws))
}
