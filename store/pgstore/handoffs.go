package pgstore

import (
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

var handoffs = newTable(kindHandoff, "handoffs",
	[]string{"id", "workspace", "request_id", "fingerprint", "state", "attempt", "source_session", "target_session",
		"source_config", "target_config", "generate_summary", "native", "report", "report_path", "facts",
		"generation_token", "generation_deadline", "error", "stop_requested", "stop_unconfirmed", "history",
		"created_at", "updated_at", "share", "reason"},
	func(h *store.Handoff) []any {
		return []any{&h.ID, &h.Workspace, &h.RequestID, &h.Fingerprint, &h.State, &h.Attempt,
			&h.SourceSession, &h.TargetSession, &h.SourceConfig, &h.TargetConfig, &h.GenerateSummary, &h.Native,
			&h.Report, &h.ReportPath, &h.Facts, token{&h.GenerationToken}, &h.GenerationDeadline, &h.Error, &h.StopRequested,
			&h.StopUnconfirmed, &h.History, &h.CreatedAt, &h.UpdatedAt, &h.Share, &h.Reason}
	},
	func(h store.Handoff) baton.WorkspaceID { return h.Workspace })

// pendingSQL is the predicate of the handoffs_pending index: a query must
// spell it the same way for the planner to use the index.
const pendingSQL = "state NOT IN ('', 'completed', 'cancelled')"

// takeSlotSQL is the update of a handoff that becomes pending: it writes
// nothing when another handoff of the workspace holds the slot.
var takeSlotSQL = handoffs.updateSQL + " AND NOT EXISTS (SELECT 1 FROM handoffs o WHERE o.workspace = $2 AND o." +
	pendingSQL + " AND o.id <> $1)"

// wroteHandoff remembers h as the handoff's current value and adds it to
// the feed, with a History of their own (the caller may change its slice
// before the commit).
func (t *tx) wroteHandoff(h store.Handoff) {
	h.History = slices.Clone(h.History)
	remember(&t.cache.handoffs, h.ID, h, true)
	t.changes(h.Workspace, kindHandoff, string(h.ID), h)
}

// handoffList reads handoffs, under the lock of ws in an Update (none
// when ws is ""), and remembers those it may.
func (t *tx) handoffList(ws baton.WorkspaceID, rest string, args ...any) ([]store.Handoff, error) {
	hs, err := list(t, handoffs, ws, rest, args...)
	for _, h := range hs {
		if !t.update || t.locked[h.Workspace] { // one snapshot, or under the lock
			t.seeHandoff(h)
		}
	}
	return hs, err
}

// GetHandoff returns the handoff id; store.ErrNotFound if absent. In an
// Update it takes the lock of the handoff's workspace and reads ahead its
// workspace and reservation rows, in the same round trip.
func (t *tx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	if err := t.readable(); err != nil {
		return store.Handoff{}, err
	}
	if c, have := t.cache.handoffs[id]; have {
		if !c.ok {
			return store.Handoff{}, backend.NotFound(pkg, kindHandoff, id)
		}
		c.r.History = slices.Clone(c.r.History)
		return c.r, nil
	}
	h, found, err := getLocked(t, handoffs, string(id), func(b *pgx.Batch) {
		t.readAhead(b, "(SELECT workspace FROM handoffs WHERE id = $1)", string(id), "")
	})
	if err != nil {
		return store.Handoff{}, err
	}
	if !found {
		remember(&t.cache.handoffs, id, store.Handoff{}, false)
		return store.Handoff{}, backend.NotFound(pkg, kindHandoff, id)
	}
	if t.update {
		// The read-ahead ran for this workspace: rows it did not find
		// are absent.
		learn(&t.cache.workspaces, h.Workspace, store.Workspace{}, false)
		learn(&t.cache.reservations, h.Workspace, store.Reservation{}, false)
	}
	t.seeHandoff(h)
	return h, nil
}

// HandoffByRequest returns the handoff of (ws, requestID) through its
// unique index; store.ErrNotFound if there is none.
func (t *tx) HandoffByRequest(ws baton.WorkspaceID, requestID string) (store.Handoff, error) {
	hs, err := t.handoffList(ws, "WHERE workspace = $1 AND request_id = $2", string(ws), requestID)
	if err == nil && len(hs) == 0 {
		err = baton.Errorf(store.ErrNotFound, "pgstore: no handoff with request id %s in workspace %s", requestID, ws)
	}
	if err != nil {
		return store.Handoff{}, err
	}
	return hs[0], nil
}

// PendingHandoffs returns the handoff holding the pending slot of ws (none
// if the slot is free), or with ws == "" every pending handoff, from the
// partial index that holds only those: O(pending).
func (t *tx) PendingHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if ws != "" {
		return t.handoffList(ws, "WHERE workspace = $1 AND "+pendingSQL, string(ws))
	}
	return t.handoffList("", "WHERE "+pendingSQL+" ORDER BY workspace")
}

// ListHandoffs returns the handoffs of ws in insert order.
func (t *tx) ListHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	return t.handoffList(ws, "WHERE workspace = $1 ORDER BY ord", string(ws))
}

// PutHandoff inserts or replaces h. store.ErrDuplicate if (workspace,
// request id) is taken by another handoff, or if h is pending and another
// handoff holds the workspace's slot; baton.ErrInvalid for an empty ID,
// Workspace or RequestID, or if it changes the stored Workspace or
// RequestID. A handoff this transaction has not read is inserted now (one
// round trip); if a row refused it, the handoff is read and replaced, or
// refused. An update of a handoff already read in this transaction is
// queued, but for one that takes the pending slot, which needs the
// server's answer.
func (t *tx) PutHandoff(h store.Handoff) error {
	if err := t.checkPut("PutHandoff", backend.Required(pkg, kindHandoff, "ID", h.ID), backend.Required(pkg, kindHandoff, "Workspace", h.Workspace),
		backend.Required(pkg, kindHandoff, "RequestID", h.RequestID)); err != nil {
		return err
	}
	if c := t.cache.handoffs[h.ID]; !c.ok {
		n, err := t.exec(h.Workspace, "insert handoff", handoffs.insertSQL, handoffs.args(h)...)
		if err != nil {
			return err
		}
		if n == 1 {
			t.wroteHandoff(h)
			return nil
		}
		delete(t.cache.handoffs, h.ID) // read it, under its lock
	}
	cur, err := t.GetHandoff(h.ID) // from the cache if read or written here
	if errors.Is(err, store.ErrNotFound) {
		return baton.Errorf(store.ErrDuplicate, "pgstore: handoff %q: the request id %q in workspace %q, or the workspace's pending slot, is taken",
			h.ID, h.RequestID, h.Workspace)
	}
	if err != nil {
		return err
	}
	if h.Workspace != cur.Workspace || h.RequestID != cur.RequestID {
		return backend.KeysChanged(pkg, h, cur)
	}
	if h.State.Pending() && !cur.State.Pending() {
		n, err := t.exec(h.Workspace, "put handoff", takeSlotSQL, handoffs.args(h)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return baton.Errorf(store.ErrDuplicate, "pgstore: handoff %q: another handoff holds the pending slot of workspace %q",
				h.ID, h.Workspace)
		}
	} else if sql, args := handoffs.diff(cur, h); sql != "" {
		t.queue(h.Workspace, sql, args...)
	}
	t.wroteHandoff(h)
	return nil
}
