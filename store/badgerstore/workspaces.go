package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// workspaces is the list of every workspace: the records themselves, in
// id order.
var workspaces = globalList(tWorkspace)

// GetWorkspace returns the workspace id; store.ErrNotFound if absent.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	return getRecord[workspaceRow](t, recordKey(tWorkspace, id), "workspace", id)
}

// PutWorkspace inserts or replaces w; baton.ErrInvalid if the id is empty.
func (t *tx) PutWorkspace(w store.Workspace) error {
	k := recordKey(tWorkspace, w.ID)
	_, found, err := current[workspaceRow](t, "PutWorkspace", k, backend.Required(pkg, "workspace", "ID", w.ID))
	if err != nil {
		return err
	}
	if err := t.put(k, toWorkspace(w)); err != nil || found {
		return err
	}
	return t.touch(workspaces)
}

// ListWorkspaces returns every workspace, sorted by ID.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var out []store.Workspace
	err := t.scan(workspaces, func(_, v []byte) (bool, error) {
		var w workspaceRow
		if err := decode(v, &w); err != nil {
			return false, err
		}
		out = append(out, w.record())
		return true, nil
	})
	return out, err
}

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// none was ever put.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	return getRecord[reservationRow](t, recordKey(tReservation, ws), "reservation of workspace", ws)
}

// PutReservation inserts or replaces the row of r.Workspace;
// baton.ErrInvalid if r.Workspace is empty.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := backend.Writable(t.readable(), t.update, pkg, "PutReservation", backend.Required(pkg, "reservation", "Workspace", r.Workspace)); err != nil {
		return err
	}
	return t.put(recordKey(tReservation, r.Workspace), toReservation(r))
}
