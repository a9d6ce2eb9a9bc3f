package pgstore

import (
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

var workspaces = newTable(kindWorkspace, "workspaces",
	[]string{"id", "name", "mission", "root", "config", "current_session", "activation_counter",
		"running", "rank_head", "ranked", "archived", "created_at", "updated_at", "share", "pressure"},
	func(w *store.Workspace) []any {
		return []any{&w.ID, &w.Name, &w.Mission, &w.Root, &w.Config, &w.CurrentSession,
			&w.ActivationCounter, &w.Running, &w.RankHead, &w.Ranked, &w.Archived, &w.CreatedAt, &w.UpdatedAt, &w.Share, &w.Pressure}
	},
	func(w store.Workspace) baton.WorkspaceID { return w.ID })

// GetWorkspace returns the workspace id; store.ErrNotFound if absent. In
// an Update it reads ahead the workspace's reservation.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	w, err := getOfWorkspace(t, workspaces, &t.cache.workspaces, id, kindWorkspace)
	w.Running = slices.Clone(w.Running) // the caller's own
	return w, err
}

// getOfWorkspace reads the row of tb keyed by workspace ws (the workspace
// row, its reservation row) through the cache m, reading ahead the other
// row of ws in an Update; store.ErrNotFound (naming what) if absent.
func getOfWorkspace[R any](t *tx, tb *table[R], m *map[baton.WorkspaceID]cached[R], ws baton.WorkspaceID, what string) (R, error) {
	var zero R
	if err := t.readable(); err != nil {
		return zero, err
	}
	if _, have := (*m)[ws]; !have {
		t.lock(ws)
		err := t.send("get "+tb.kind, func(b *pgx.Batch) {
			b.Queue(tb.getSQL, string(ws)).Query(func(rows pgx.Rows) error {
				r, found, err := scanOne(rows, tb.scan)
				remember(m, ws, r, found)
				return err
			})
			t.readAhead(b, "$1", string(ws), ws)
		})
		if err != nil {
			return zero, err
		}
	}
	c := (*m)[ws]
	if !c.ok {
		return zero, backend.NotFound(pkg, what, ws)
	}
	return c.r, nil
}

// PutWorkspace inserts or replaces w; baton.ErrInvalid if the id is
// empty. It cannot fail otherwise, so it is queued.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.checkPut("PutWorkspace", backend.Required(pkg, "workspace", "ID", w.ID)); err != nil {
		return err
	}
	if c := t.cache.workspaces[w.ID]; c.ok {
		t.see(kindWorkspace, string(w.ID))
	}
	put(t, workspaces, string(w.ID), w)
	w.Running = slices.Clone(w.Running) // the cache's own
	remember(&t.cache.workspaces, w.ID, w, true)
	return nil
}

// ListWorkspaces returns every workspace in insert order.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	return list(t, workspaces, "", "ORDER BY ord")
}

// reservations are keyed by workspace, and written by an upsert
// (PutReservation inserts or replaces).
var reservations = newTable("reservation", "reservations",
	[]string{"workspace", "held", "handoff", "owner", "epoch", "lease_holder", "lease_expires", "lease_store", "updated_at"},
	func(r *store.Reservation) []any {
		return []any{&r.Workspace, &r.Held, &r.Handoff, token{&r.Owner}, &r.Epoch, &r.LeaseHolder,
			&r.LeaseExpires, &r.LeaseStore, &r.UpdatedAt}
	},
	func(r store.Reservation) baton.WorkspaceID { return r.Workspace })

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// it was never taken. In an Update it reads ahead the workspace row.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	return getOfWorkspace(t, reservations, &t.cache.reservations, ws, "reservation of workspace")
}

// PutReservation inserts or replaces the row of r.Workspace; baton.ErrInvalid
// if r.Workspace is empty. It cannot fail otherwise, so it is queued.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := t.checkPut("PutReservation", backend.Required(pkg, "reservation", "Workspace", r.Workspace)); err != nil {
		return err
	}
	t.queue(r.Workspace, reservations.upsertSQL, reservations.args(r)...)
	remember(&t.cache.reservations, r.Workspace, r, true)
	return nil
}
