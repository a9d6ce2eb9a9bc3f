package memstore

import (
	"cmp"
	"maps"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// GetWorkspace returns the workspace id; store.ErrNotFound if absent.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	return get(t, t.st.workspaces, "workspace", id)
}

// PutWorkspace inserts or replaces w; baton.ErrInvalid if the id is empty.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.begin("PutWorkspace", backend.Required(pkg, "workspace", "ID", w.ID)); err != nil {
		return err
	}
	write(t, &t.st.workspaces, w.ID, records.Workspace(w, records.UTC), 0)
	return nil
}

// ListWorkspaces returns every workspace, sorted by ID.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	return list(t, t.st.workspaces, maps.Keys(t.st.workspaces), func(a, b row[store.Workspace]) int { return cmp.Compare(a.r.ID, b.r.ID) })
}

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// none was ever put.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	return get(t, t.st.reservations, "reservation of workspace", ws)
}

// PutReservation inserts or replaces the row of r.Workspace;
// baton.ErrInvalid if r.Workspace is empty.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := t.begin("PutReservation", backend.Required(pkg, "reservation", "Workspace", r.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.reservations, r.Workspace, records.Reservation(r, records.UTC), 0)
	return nil
}
