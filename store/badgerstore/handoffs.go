package badgerstore

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// pendingList is the 'p' table: one slot key per workspace with a pending
// handoff, so listing it costs O(pending).
var pendingList = globalList(tPendingSlot)

// handoffIndex is the entry of h in the handoffs of its workspace, in
// insert order. Workspace and RequestID never change, so neither does it.
func handoffIndex(h handoffRow) []index {
	return []index{seqIndex(tHandoffsByWS, h.Workspace, h.Seq, h.ID)}
}

// GetHandoff returns the handoff id; store.ErrNotFound if absent.
func (t *tx) GetHandoff(id baton.HandoffID) (store.Handoff, error) {
	return getRecord[handoffRow](t, recordKey(tHandoff, id), "handoff", id)
}

// byPointer returns the handoff whose id is stored under k, after the
// readable check; none if k is absent.
func (t *tx) byPointer(k key) ([]store.Handoff, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	id, err := t.getString(k)
	if err != nil || id == "" {
		return nil, err
	}
	hs, err := load(t, []string{id}, tHandoff, handoffRow.record)
	if err != nil {
		return nil, fmt.Errorf("%w (through key %q)", err, []byte(k))
	}
	return hs, nil
}

// HandoffByRequest returns the handoff of (ws, requestID), in any state;
// store.ErrNotFound if there is none.
func (t *tx) HandoffByRequest(ws baton.WorkspaceID, requestID string) (store.Handoff, error) {
	hs, err := t.byPointer(requestKey(ws, requestID))
	if err == nil && len(hs) == 0 {
		err = baton.Errorf(store.ErrNotFound, "badgerstore: no handoff with request id %q in workspace %q", requestID, ws)
	}
	if err != nil {
		return store.Handoff{}, err
	}
	return hs[0], nil
}

// PendingHandoffs returns the handoff holding the pending slot of ws (none
// if the slot is free: one read of its slot key), or with ws == "" every
// pending handoff, oldest (CreatedAt, then ID) first, reading only those.
func (t *tx) PendingHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	if ws != "" {
		return t.byPointer(pendingSlotKey(ws))
	}
	hs, err := listed(t, pendingList, nil, 0, tHandoff, handoffRow.record)
	slices.SortFunc(hs, func(a, b store.Handoff) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return hs, err
}

// ListHandoffs returns the handoffs of ws in creation (insert) order.
func (t *tx) ListHandoffs(ws baton.WorkspaceID) ([]store.Handoff, error) {
	return listed(t, ownedList(tHandoffsByWS, string(ws)), nil, 0, tHandoff, handoffRow.record)
}

// PutHandoff inserts or replaces h. store.ErrDuplicate if (Workspace,
// RequestID) is taken by another handoff (forever: in any state), or if h
// is pending and another handoff holds the pending slot of its workspace;
// baton.ErrInvalid if ID, Workspace or RequestID is empty, or if h would
// change the stored Workspace or RequestID.
//
// The id, request id and slot checks are Gets of single keys, so two
// concurrent inserts that both pass them conflict at commit and the loser
// re-runs and sees the winner.
func (t *tx) PutHandoff(h store.Handoff) error {
	k := recordKey(tHandoff, h.ID)
	cur, found, seq, err := currentSeq[handoffRow](t, "PutHandoff", k, tHandoffsByWS, h.Workspace, backend.Required(pkg, "handoff", "ID", h.ID),
		backend.Required(pkg, "handoff", "Workspace", h.Workspace), backend.Required(pkg, "handoff", "RequestID", h.RequestID))
	if err != nil {
		return err
	}
	rk := requestKey(h.Workspace, h.RequestID)
	if found && (h.Workspace != cur.Workspace || h.RequestID != cur.RequestID) {
		return backend.KeysChanged(pkg, h, cur.Handoff)
	}
	if !found {
		holder, err := t.getString(rk)
		if err != nil {
			return err
		}
		if holder != "" {
			return backend.RequestTaken(pkg, h, holder)
		}
	}
	// The pending slot of h's workspace is read always (the read is what
	// makes concurrent claims conflict); a pending h cannot take another's.
	slot, err := t.getString(pendingSlotKey(h.Workspace))
	if err != nil {
		return err
	}
	if h.State.Pending() && slot != "" && slot != string(h.ID) {
		return backend.SlotTaken(pkg, h, slot)
	}
	// A stored handoff keeps its index entry (see handoffIndex): only a
	// new one writes it, and its request key.
	entries := handoffIndex
	if found {
		entries = func(handoffRow) []index { return nil }
	}
	return putRecord(t, k, toHandoff(h, seq), cur, found, tHandoffsByWS, h.Workspace, seq, entries, "handoff",
		// The slot follows h's state.
		func() error { return t.reindex(slotIndex(h, slot == string(h.ID)), slotIndex(h, h.State.Pending())) },
		func() error {
			if found {
				return nil
			}
			return t.set(rk, []byte(h.ID))
		},
	)
}

// slotIndex is the pending slot of h's workspace as the entry of
// pendingList it is, when h holds it (holds), or none.
func slotIndex(h store.Handoff, holds bool) []index {
	if !holds {
		return nil
	}
	return []index{{pendingList, pendingSlotKey(h.Workspace), string(h.ID)}}
}
