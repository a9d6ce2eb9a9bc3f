package pgstore

import (
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var workspaces = newVersionedTable(kindWorkspace, "workspaces",
	[]string{"id", "name", "mission", "root", "config", "current_session", "activation_counter",
		"running", "rank_head", "ranked", "archived", "created_at", "updated_at"},
	func(row pgx.Row) (store.Workspace, int64, error) {
		var w store.Workspace
		var running []string
		var version int64
		err := row.Scan(&w.ID, &w.Name, &w.Mission, &w.Root, &w.Config, &w.CurrentSession,
			&w.ActivationCounter, &running, &w.RankHead, &w.Ranked, &w.Archived, &w.CreatedAt, &w.UpdatedAt, &version)
		for _, id := range running {
			w.Running = append(w.Running, baton.SessionID(id))
		}
		return w, version, err
	},
	func(w store.Workspace) []any {
		running := make([]string, 0, len(w.Running))
		for _, id := range w.Running {
			running = append(running, string(id))
		}
		return []any{string(w.ID), w.Name, w.Mission, w.Root, w.Config, string(w.CurrentSession),
			w.ActivationCounter, running, string(w.RankHead), w.Ranked, w.Archived, w.CreatedAt, w.UpdatedAt}
	},
	workspaceAsRead)

// GetWorkspace returns the workspace id; store.ErrNotFound if absent.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	if err := t.readable(); err != nil {
		return store.Workspace{}, err
	}
	t.cachedWorkspace(id)
	if _, have := t.cache.workspaces[id]; !have {
		err := t.send("get workspace", func(b *pgx.Batch) {
			b.Queue(workspaces.getSQL, string(id)).Query(func(rows pgx.Rows) error {
				found := false
				for rows.Next() {
					w, v, err := workspaces.scanV(rows)
					if err != nil {
						return err
					}
					found = true
					t.recordWorkspace(w, v)
					t.seeWorkspace(w)
				}
				if !found {
					remember(&t.cache.workspaces, id, store.Workspace{}, false)
				}
				return rows.Err()
			})
			t.readAhead(b, "$1", string(id), id)
		})
		if err != nil {
			return store.Workspace{}, err
		}
	}
	c := t.cache.workspaces[id]
	if !c.ok {
		return store.Workspace{}, notFound(kindWorkspace, id)
	}
	w := c.r
	w.Running = slices.Clone(w.Running) // the caller's own
	return w, nil
}

// InsertWorkspace adds w; store.ErrDuplicate if its id exists,
// baton.ErrInvalid if it is empty.
func (t *tx) InsertWorkspace(w store.Workspace) error {
	if err := t.writable("InsertWorkspace"); err != nil {
		return err
	}
	if err := required("workspace", "ID", w.ID); err != nil {
		return err
	}
	if c, have := t.cache.workspaces[w.ID]; (have && c.ok) || (!have && t.rowExists(recordKey{kindWorkspace, string(w.ID)})) {
		return duplicate(kindWorkspace, w.ID)
	}
	if err := insert(t, workspaces, string(w.ID), w); err != nil {
		return err
	}
	t.seeWorkspace(w)
	return nil
}

// PutWorkspace replaces w; store.ErrNotFound if absent. A workspace the
// transaction has read or written is queued.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.writable("PutWorkspace"); err != nil {
		return err
	}
	if err := required("workspace", "ID", w.ID); err != nil {
		return err
	}
	if c, have := t.cache.workspaces[w.ID]; have {
		if !c.ok {
			return notFound(kindWorkspace, w.ID)
		}
		t.see(kindWorkspace, string(w.ID))
	} else if t.rowExists(recordKey{kindWorkspace, string(w.ID)}) {
		t.see(kindWorkspace, string(w.ID))
	}
	if err := put(t, workspaces, string(w.ID), w); err != nil {
		return err
	}
	t.seeWorkspace(w)
	return nil
}

// ListWorkspaces returns every workspace in insert order.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	return list(t, workspaces, "ORDER BY ord")
}

// reservations are keyed by workspace, and written by an upsert
// (PutReservation inserts or replaces).
var reservations = newVersionedTable(kindReservation, "reservations",
	[]string{"workspace", "held", "handoff", "owner", "epoch", "lease_holder", "lease_expires", "lease_store", "updated_at"},
	func(row pgx.Row) (store.Reservation, int64, error) {
		var r store.Reservation
		var owner []byte
		var version int64
		err := row.Scan(&r.Workspace, &r.Held, &r.Handoff, &owner, &r.Epoch, &r.LeaseHolder,
			&r.LeaseExpires, &r.LeaseStore, &r.UpdatedAt, &version)
		if err != nil {
			return r, 0, err
		}
		r.Owner, err = tokenHash(owner)
		return r, version, err
	},
	func(r store.Reservation) []any {
		return []any{string(r.Workspace), r.Held, string(r.Handoff), r.Owner[:], r.Epoch, r.LeaseHolder,
			r.LeaseExpires, r.LeaseStore, r.UpdatedAt}
	},
	reservationAsRead)

const putReservationSQL = `INSERT INTO reservations (workspace, held, handoff, owner, epoch, lease_holder, lease_expires, lease_store, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
	ON CONFLICT (workspace) DO UPDATE SET held = $2, handoff = $3, owner = $4, epoch = $5,
		lease_holder = $6, lease_expires = $7, lease_store = $8, updated_at = $9, ` + nextVersion +
	" RETURNING version"

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// it was never taken.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	if err := t.readable(); err != nil {
		return store.Reservation{}, err
	}
	t.cachedReservation(ws)
	if _, have := t.cache.reservations[ws]; !have {
		err := t.send("get reservation", func(b *pgx.Batch) {
			b.Queue(reservations.getSQL, string(ws)).Query(func(rows pgx.Rows) error {
				found := false
				for rows.Next() {
					r, v, err := reservations.scanV(rows)
					if err != nil {
						return err
					}
					found = true
					t.record(recordKey{kindReservation, string(r.Workspace)}, cachedRow{r, v})
					t.seeReservation(r)
				}
				if !found {
					remember(&t.cache.reservations, ws, store.Reservation{}, false)
				}
				return rows.Err()
			})
			t.readAhead(b, "$1", string(ws), ws)
		})
		if err != nil {
			return store.Reservation{}, err
		}
	}
	c := t.cache.reservations[ws]
	if !c.ok {
		return store.Reservation{}, notFound("reservation of workspace", ws)
	}
	return c.r, nil
}

// PutReservation inserts or replaces the row of r.Workspace; baton.ErrInvalid
// if r.Workspace is empty. It cannot fail otherwise, so it is queued.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := t.writable("PutReservation"); err != nil {
		return err
	}
	if err := required("reservation", "Workspace", r.Workspace); err != nil {
		return err
	}
	t.queueRow(recordKey{kindReservation, string(r.Workspace)}, written(reservations, r), putReservationSQL, reservations.args(r)...)
	t.seeReservation(r)
	return nil
}
