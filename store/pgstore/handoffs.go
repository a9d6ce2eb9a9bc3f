package pgstore

import (
	"encoding/json"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var handoffs = newVersionedTable(kindHandoff, "handoffs",
	[]string{"id", "workspace", "request_id", "fingerprint", "state", "attempt", "source_session", "target_session",
		"source_config", "target_config", "generate_summary", "native", "report", "report_path", "facts",
		"generation_token", "generation_deadline", "error", "stop_requested", "stop_unconfirmed", "history",
		"created_at", "updated_at"},
	func(row pgx.Row) (store.Handoff, int64, error) {
		var h store.Handoff
		var token []byte
		var version int64
		err := row.Scan(&h.ID, &h.Workspace, &h.RequestID, &h.Fingerprint, &h.State, &h.Attempt,
			&h.SourceSession, &h.TargetSession, &h.SourceConfig, &h.TargetConfig, &h.GenerateSummary, &h.Native,
			&h.Report, &h.ReportPath, &h.Facts, &token, &h.GenerationDeadline, &h.Error, &h.StopRequested,
			&h.StopUnconfirmed, &h.History, &h.CreatedAt, &h.UpdatedAt, &version)
		if err != nil {
			return h, 0, err
		}
		h.GenerationToken, err = tokenHash(token)
		return h, version, err
	},
	func(h store.Handoff) []any {
		history, _ := json.Marshal(h.History) // plain structs: Marshal cannot fail
		return []any{string(h.ID), string(h.Workspace), h.RequestID, h.Fingerprint, string(h.State), h.Attempt,
			string(h.SourceSession), string(h.TargetSession), h.SourceConfig, h.TargetConfig, h.GenerateSummary, h.Native,
			h.Report, h.ReportPath, h.Facts, h.GenerationToken[:], h.GenerationDeadline, h.Error, h.StopRequested,
			h.StopUnconfirmed, history, h.CreatedAt, h.UpdatedAt}
	},
	handoffAsRead)

// pendingSQL is the predicate of the handoffs_pending index: a query must
// spell it the same way for the planner to use the index.
const pendingSQL = "state NOT IN ('', 'completed', 'cancelled')"

// takeSlotSQL is the update of a handoff that becomes pending: it writes
// nothing when another handoff of the workspace holds the slot.
var takeSlotSQL = handoffs.updateSQL + " AND NOT EXISTS (SELECT 1 FROM handoffs o WHERE o.workspace = $2 AND o." +
	pendingSQL + " AND o.id <> $1)" + handoffs.returning

// changeHandoff adds h to the feed, with a History of its own (the caller
// may change its slice before the commit).
func (t *tx) changeHandoff(h store.Handoff) {
	h.History = slices.Clone(h.History)
	t.changes(h.Workspace, kindHandoff, string(h.ID), h)
}

// handoffList reads handoffs and remembers them.
func (t *tx) handoffList(rest string, args ...any) ([]store.Handoff, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var hs []store.Handoff
	err := t.query("list handoffs", handoffs.selectSQL+" "+rest, args, func(rows pgx.Rows) error {
		h, v, err := handoffs.scanV(rows)
		if err != nil {
			return err
		}
		hs = append(hs, h)
		t.recordHandoff(h, v)
		t.seeHandoff(h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return hs, nil
}

// oneHandoff returns the single handoff of a list, or store.ErrNotFound
// with what.
func (t *tx) oneHandoff(what string, rest string, args ...any) (store.Handoff, error) {
	hs, err := t.handoffList(rest, args...)
	if err != nil {
		return store.Handoff{}, err
	}
	if len(hs) == 0 {
		return store.Handoff{}, baton.Errorf(store.ErrNotFound, "pgstore: %s", what)
	}
	return hs[0], nil
}

// GetHandoff returns the handoff id; store.ErrNotFound if absent. In an
// Update it reads ahead the workspace and reservation rows of the
// handoff's workspace.
func (t *tx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	if err := t.readable(); err != nil {
		return store.Handoff{}, err
	}
	c, have := t.cachedHandoff(id)
	if !have {
		c = cached[store.Handoff]{}
		err := t.send("get handoff", func(b *pgx.Batch) {
			b.Queue(handoffs.getSQL, string(id)).Query(func(rows pgx.Rows) error {
				for rows.Next() {
					h, v, err := handoffs.scanV(rows)
					if err != nil {
						return err
					}
					c = cached[store.Handoff]{h, true}
					t.recordHandoff(h, v)
				}
				return rows.Err()
			})
			t.readAhead(b, "(SELECT workspace FROM handoffs WHERE id = $1)", string(id), "")
		})
		if err != nil {
			return store.Handoff{}, err
		}
		switch {
		case !c.ok:
			remember(&t.cache.handoffs, id, store.Handoff{}, false)
		case t.update:
			// The read-ahead ran for this workspace: rows it did not find
			// are absent.
			learn(&t.cache.workspaces, c.r.Workspace, store.Workspace{}, false)
			learn(&t.cache.reservations, c.r.Workspace, store.Reservation{}, false)
			fallthrough
		default:
			t.seeHandoff(c.r)
		}
	}
	if !c.ok {
		return store.Handoff{}, notFound(kindHandoff, id)
	}
	return c.r, nil
}

// HandoffByRequest returns the handoff of (ws, requestID) through its
// unique index; store.ErrNotFound if there is none.
func (t *tx) HandoffByRequest(ws baton.WorkspaceID, requestID string) (store.Handoff, error) {
	return t.oneHandoff("no handoff with request id "+requestID+" in workspace "+string(ws),
		"WHERE workspace = $1 AND request_id = $2", string(ws), requestID)
}

// PendingHandoff returns the handoff holding the pending slot of ws;
// store.ErrNotFound if the slot is free.
func (t *tx) PendingHandoff(ws baton.WorkspaceID) (store.Handoff, error) {
	return t.oneHandoff("no pending handoff in workspace "+string(ws),
		"WHERE workspace = $1 AND "+pendingSQL, string(ws))
}

// ListPendingHandoffs returns every pending handoff, from the partial
// index that holds only those: O(pending).
func (t *tx) ListPendingHandoffs() ([]store.Handoff, error) {
	return t.handoffList("WHERE " + pendingSQL + " ORDER BY workspace")
}

// ListHandoffs returns the handoffs of ws in insert order.
func (t *tx) ListHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	return t.handoffList("WHERE workspace = $1 ORDER BY ord", string(ws))
}

// InsertHandoff adds h. store.ErrDuplicate if its id exists, if (workspace,
// request id) is taken, or if h is pending and another handoff holds the
// workspace's slot; baton.ErrInvalid for an empty ID, Workspace or
// RequestID.
func (t *tx) InsertHandoff(h store.Handoff) error {
	if err := t.writable("InsertHandoff"); err != nil {
		return err
	}
	if err := firstErr(required(kindHandoff, "ID", h.ID), required(kindHandoff, "Workspace", h.Workspace),
		required(kindHandoff, "RequestID", h.RequestID)); err != nil {
		return err
	}
	k := recordKey{kindHandoff, string(h.ID)}
	if c, have := t.cache.handoffs[h.ID]; (have && c.ok) || (!have && t.rowExists(k)) {
		return duplicate(kindHandoff, h.ID)
	}
	n, err := t.execRow("insert handoff", k, written(handoffs, h), handoffs.insertSQL+handoffs.returning, handoffs.args(h)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return baton.Errorf(store.ErrDuplicate,
			"pgstore: handoff %q: the id, the request id %q in workspace %q, or the workspace's pending slot is taken",
			h.ID, h.RequestID, h.Workspace)
	}
	t.seeHandoff(h)
	t.changeHandoff(h)
	return nil
}

// PutHandoff replaces h. store.ErrNotFound if absent; baton.ErrInvalid if
// it changes Workspace or RequestID; store.ErrDuplicate if h becomes
// pending while another handoff holds the slot. Only the last case needs
// the server's answer; an update of a handoff already read in this
// transaction is otherwise queued.
func (t *tx) PutHandoff(h store.Handoff) error {
	if err := t.writable("PutHandoff"); err != nil {
		return err
	}
	if err := required(kindHandoff, "ID", h.ID); err != nil {
		return err
	}
	cur, err := t.GetHandoff(h.ID) // from the cache if read or written here
	if err != nil {
		return err
	}
	if h.Workspace != cur.Workspace || h.RequestID != cur.RequestID {
		return baton.Errorf(baton.ErrInvalid, "pgstore: PutHandoff %q: workspace and request id never change (have %q/%q, got %q/%q)",
			h.ID, cur.Workspace, cur.RequestID, h.Workspace, h.RequestID)
	}
	if h.State.Pending() && !cur.State.Pending() {
		n, err := t.execRow("put handoff", recordKey{kindHandoff, string(h.ID)}, written(handoffs, h), takeSlotSQL, handoffs.args(h)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return baton.Errorf(store.ErrDuplicate, "pgstore: handoff %q: another handoff holds the pending slot of workspace %q",
				h.ID, h.Workspace)
		}
	} else {
		sql, checked, args := handoffs.diff(cur, h)
		t.queueChecked(recordKey{kindHandoff, string(h.ID)}, written(handoffs, h), sql, checked, args...)
	}
	t.seeHandoff(h)
	t.changeHandoff(h)
	return nil
}
