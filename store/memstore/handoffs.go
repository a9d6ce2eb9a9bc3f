package memstore

import (
	"maps"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

type requestKey struct {
	ws  baton.WorkspaceID
	req string
}

// indexHandoff adds or removes the index entries of h; it removes only
// those that point at h (during an undo another handoff may already hold
// a slot). A stored handoff keeps its Workspace and RequestID (PutHandoff
// refuses to change them): only the pending slot can move.
func (s *state) indexHandoff(h store.Handoff, in bool) {
	s.handoffsByWS.set(h.Workspace, h.ID, in)
	rk := requestKey{h.Workspace, h.RequestID}
	if in {
		if s.byRequest == nil {
			s.byRequest, s.pending = map[requestKey]baton.HandoffID{}, map[baton.WorkspaceID]baton.HandoffID{}
		}
		s.byRequest[rk] = h.ID
		if h.State.Pending() {
			s.pending[h.Workspace] = h.ID
		}
		return
	}
	if s.byRequest[rk] == h.ID {
		delete(s.byRequest, rk)
	}
	if s.pending[h.Workspace] == h.ID {
		delete(s.pending, h.Workspace)
	}
}

// GetHandoff returns the handoff id; store.ErrNotFound if absent.
func (t *tx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	return get(t, t.st.handoffs, "handoff", id)
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
	return clone(t.st.handoffs[id].r), nil
}

// PendingHandoffs returns the handoff holding the pending slot of ws (none
// if the slot is free), or with ws == "" every pending handoff, oldest
// first, reading only those.
func (t *tx) PendingHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if ws == "" {
		return list(t, t.st.handoffs, maps.Values(t.st.pending), bySeq)
	}
	var ids []baton.HandoffID
	if id, ok := t.st.pending[ws]; ok {
		ids = append(ids, id)
	}
	return list(t, t.st.handoffs, slices.Values(ids), bySeq)
}

// ListHandoffs returns the handoffs of ws in creation (insert) order.
func (t *tx) ListHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	return list(t, t.st.handoffs, maps.Keys(t.st.handoffsByWS[ws]), bySeq)
}

// PutHandoff inserts or replaces h. store.ErrDuplicate if (Workspace,
// RequestID) is taken by another handoff (forever: in any state), or if h
// is pending and another handoff holds the pending slot of its workspace;
// baton.ErrInvalid if ID, Workspace or RequestID is empty, or if h would
// change the stored Workspace or RequestID.
func (t *tx) PutHandoff(h store.Handoff) error {
	if err := t.begin("PutHandoff", backend.Required(pkg, "handoff", "ID", h.ID), backend.Required(pkg, "handoff", "Workspace", h.Workspace),
		backend.Required(pkg, "handoff", "RequestID", h.RequestID)); err != nil {
		return err
	}
	cur, found := t.st.handoffs[h.ID]
	if found && (h.Workspace != cur.r.Workspace || h.RequestID != cur.r.RequestID) {
		return backend.KeysChanged(pkg, h, cur.r)
	}
	if id, ok := t.st.byRequest[requestKey{h.Workspace, h.RequestID}]; ok && id != h.ID {
		return backend.RequestTaken(pkg, h, id)
	}
	if id, ok := t.st.pending[h.Workspace]; h.State.Pending() && ok && id != h.ID {
		return backend.SlotTaken(pkg, h, id)
	}
	h = records.Handoff(h, records.UTC)
	write(t, &t.st.handoffs, h.ID, h, insertSeq(t, t.st.handoffs, h.ID))
	c := clone(h) // the stored value may be replaced, never changed in place
	t.changes.Add(h.ID, store.Change{Workspace: h.Workspace, Handoff: &c})
	return nil
}
