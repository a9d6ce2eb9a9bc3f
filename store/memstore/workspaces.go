package memstore

import (
	"cmp"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

func (s *state) putWorkspace(w store.Workspace) { s.workspaces[w.ID] = w }

func (s *state) deleteWorkspace(id baton.WorkspaceID) { delete(s.workspaces, id) }

// restoreWorkspace returns an undo that puts back what was under id.
func (s *state) restoreWorkspace(id baton.WorkspaceID) func() {
	old, ok := s.workspaces[id]
	if !ok {
		return func() { s.deleteWorkspace(id) }
	}
	return func() { s.putWorkspace(old) }
}

// GetWorkspace returns the workspace id; store.ErrNotFound if absent.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	if err := t.readable(); err != nil {
		return store.Workspace{}, err
	}
	w, ok := t.st.workspaces[id]
	if !ok {
		return store.Workspace{}, notFound("workspace", id)
	}
	return records.Workspace(w, noNorm), nil
}

// PutWorkspace inserts or replaces w; baton.ErrInvalid if the id is empty.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.begin("PutWorkspace", key("workspace", "ID", w.ID)); err != nil {
		return err
	}
	t.onUndo(t.st.restoreWorkspace(w.ID))
	t.st.putWorkspace(records.Workspace(w, records.UTC))
	return nil
}

// ListWorkspaces returns every workspace, sorted by ID.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	out := make([]store.Workspace, 0, len(t.st.workspaces))
	for _, w := range t.st.workspaces {
		out = append(out, records.Workspace(w, noNorm))
	}
	slices.SortFunc(out, func(a, b store.Workspace) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

func (s *state) restoreReservation(ws baton.WorkspaceID) func() {
	old, ok := s.reservations[ws]
	if !ok {
		return func() { delete(s.reservations, ws) }
	}
	return func() { s.reservations[ws] = old }
}

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// none was ever put.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	if err := t.readable(); err != nil {
		return store.Reservation{}, err
	}
	r, ok := t.st.reservations[ws]
	if !ok {
		return store.Reservation{}, notFound("reservation of workspace", ws)
	}
	return r, nil
}

// PutReservation inserts or replaces the row of r.Workspace;
// baton.ErrInvalid if r.Workspace is empty.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := t.writable("PutReservation"); err != nil {
		return err
	}
	if err := key("reservation", "Workspace", r.Workspace); err != nil {
		return err
	}
	t.onUndo(t.st.restoreReservation(r.Workspace))
	t.st.reservations[r.Workspace] = records.Reservation(r, records.UTC)
	return nil
}
