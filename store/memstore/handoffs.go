package memstore

import (
	"cmp"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// handoffRow is a stored handoff and its insert number (creation order).
type handoffRow struct {
	h   store.Handoff
	seq int64
}

type requestKey struct {
	ws  baton.WorkspaceID
	req string
}

// outHandoff copies a stored handoff for the caller, who may change its
// History freely.
func outHandoff(h store.Handoff) store.Handoff { return records.Handoff(h, noNorm) }

func (st *state) putHandoff(r handoffRow) {
	h := r.h
	if cur, ok := st.handoffs[h.ID]; ok {
		// A stored handoff keeps its Workspace and RequestID (PutHandoff
		// refuses to change them): only the pending slot can move.
		if st.pending[cur.h.Workspace] == h.ID {
			delete(st.pending, cur.h.Workspace)
		}
	} else {
		st.handoffsByWS.add(h.Workspace, h.ID)
		st.byRequest[requestKey{h.Workspace, h.RequestID}] = h.ID
	}
	st.handoffs[h.ID] = r
	if h.State.Pending() {
		st.pending[h.Workspace] = h.ID
	}
}

// deleteHandoff removes id and the index entries that point at it (and
// only those: during an undo another handoff may already hold a slot).
func (st *state) deleteHandoff(id baton.HandoffID) {
	cur, ok := st.handoffs[id]
	if !ok {
		return
	}
	h := cur.h
	st.handoffsByWS.remove(h.Workspace, id)
	if k := (requestKey{h.Workspace, h.RequestID}); st.byRequest[k] == id {
		delete(st.byRequest, k)
	}
	if st.pending[h.Workspace] == id {
		delete(st.pending, h.Workspace)
	}
	delete(st.handoffs, id)
}

func (st *state) restoreHandoff(id baton.HandoffID) func() {
	old, ok := st.handoffs[id]
	if !ok {
		return func() { st.deleteHandoff(id) }
	}
	return func() { st.putHandoff(old) }
}

func byHandoffSeq(a, b handoffRow) int { return cmp.Compare(a.seq, b.seq) }

// GetHandoff returns the handoff id; store.ErrNotFound if absent.
func (t *tx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	if err := t.readable(); err != nil {
		return store.Handoff{}, err
	}
	r, ok := t.st.handoffs[id]
	if !ok {
		return store.Handoff{}, notFound("handoff", id)
	}
	return outHandoff(r.h), nil
}

// HandoffByRequest returns the handoff of (ws, requestID), in any state;
// store.ErrNotFound if there is none.
func (t *tx) HandoffByRequest(ws baton.WorkspaceID, requestID string) (store.Handoff, error) {
	if err := t.readable(); err != nil {
		return store.Handoff{}, err
	}
	id, ok := t.st.byRequest[requestKey{ws, requestID}]
	if !ok {
		return store.Handoff{}, baton.Errorf(store.ErrNotFound, "memstore: handoff with request id %q in workspace %q", requestID, ws)
	}
	return outHandoff(t.st.handoffs[id].h), nil
}

// PendingHandoffs returns the handoff holding the pending slot of ws (none
// if the slot is free), or with ws == "" every pending handoff, oldest
// first, reading only those.
func (t *tx) PendingHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	if ws != "" {
		id, ok := t.st.pending[ws]
		if !ok {
			return nil, nil
		}
		return []store.Handoff{outHandoff(t.st.handoffs[id].h)}, nil
	}
	rows := make([]handoffRow, 0, len(t.st.pending))
	for _, id := range t.st.pending {
		rows = append(rows, t.st.handoffs[id])
	}
	return handoffsOf(rows), nil
}

// ListHandoffs returns the handoffs of ws in creation (insert) order.
func (t *tx) ListHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	rows := collect(t.st.handoffsByWS[ws],
		func(id baton.HandoffID) handoffRow { return t.st.handoffs[id] }, byHandoffSeq)
	return handoffsOf(rows), nil
}

// handoffsOf sorts rows by creation and copies their handoffs out.
func handoffsOf(rows []handoffRow) []store.Handoff {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, byHandoffSeq)
	out := make([]store.Handoff, len(rows))
	for i, r := range rows {
		out[i] = outHandoff(r.h)
	}
	return out
}

// PutHandoff inserts or replaces h. store.ErrDuplicate if (Workspace,
// RequestID) is taken by another handoff (forever: in any state), or if h
// is pending and another handoff holds the pending slot of its workspace;
// baton.ErrInvalid if ID, Workspace or RequestID is empty, or if h would
// change the stored Workspace or RequestID.
func (t *tx) PutHandoff(h store.Handoff) error {
	if err := t.begin("PutHandoff", key("handoff", "ID", h.ID), key("handoff", "Workspace", h.Workspace),
		key("handoff", "RequestID", h.RequestID)); err != nil {
		return err
	}
	cur, found := t.st.handoffs[h.ID]
	if found && (h.Workspace != cur.h.Workspace || h.RequestID != cur.h.RequestID) {
		return baton.Errorf(baton.ErrInvalid, "memstore: PutHandoff %q: workspace and request id cannot change (stored %q/%q, given %q/%q)",
			h.ID, cur.h.Workspace, cur.h.RequestID, h.Workspace, h.RequestID)
	}
	if id, ok := t.st.byRequest[requestKey{h.Workspace, h.RequestID}]; ok && id != h.ID {
		return baton.Errorf(store.ErrDuplicate, "memstore: request id %q of workspace %q is taken by handoff %q", h.RequestID, h.Workspace, id)
	}
	if err := t.checkSlot(h); err != nil {
		return err
	}
	h = records.Handoff(h, records.UTC)
	t.onUndo(t.st.restoreHandoff(h.ID))
	t.st.putHandoff(handoffRow{h: h, seq: t.seqOf(found, cur.seq)})
	t.recordHandoff(h)
	return nil
}

// checkSlot refuses a pending h while another handoff holds the slot.
func (t *tx) checkSlot(h store.Handoff) error {
	if !h.State.Pending() {
		return nil
	}
	if id, ok := t.st.pending[h.Workspace]; ok && id != h.ID {
		return baton.Errorf(store.ErrDuplicate, "memstore: workspace %q already has pending handoff %q", h.Workspace, id)
	}
	return nil
}
