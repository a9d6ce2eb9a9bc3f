package badgerstore

import (
	"cmp"
	"fmt"
	"slices"
	"time"

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

// sessionIndex is the entry of s in the sessions of its workspace, ordered
// by Seq (the id breaks ties, which only a session moved between
// workspaces can cause).
func sessionIndex(s sessionRow) []index {
	return []index{seqIndex(tSessionsByWS, s.Workspace, uint64(s.Seq), s.ID)}
}

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	return getRecord[sessionRow](t, recordKey(tSession, id), "session", id)
}

// PutSession inserts s with the next Seq of its workspace (the first is 1)
// or replaces it keeping its stored Seq (a session moved to another
// workspace keeps it there); baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutSession(s store.Session) error {
	k := recordKey(tSession, s.ID)
	cur, found, seq, err := currentSeq[sessionRow](t, "PutSession", k, tSessionsByWS, s.Workspace, backend.Required(pkg, "session", "ID", s.ID), backend.Required(pkg, "session", "Workspace", s.Workspace))
	if err != nil {
		return err
	}
	s.Seq = int64(seq)
	return putRecord(t, k, toSession(s), cur, found, tSessionsByWS, s.Workspace, seq, sessionIndex, "session")
}

// ListSessions returns the sessions of ws in creation order (ascending
// Seq), reading only those.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	return listed(t, ownedList(tSessionsByWS, string(ws)), nil, 0, tSession, sessionRow.record)
}

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

// dueList holds the pending wakeups of every workspace by (At, ID).
var dueList = globalList(tDue)

// wakeupIndexes are the entries of w: in its session's list (if pinned),
// in its workspace's list, and in the due list while pending; each ordered
// by (At, ID).
func wakeupIndexes(w wakeupRow) []index {
	id := string(w.ID)
	byWS := ownedList(tWakeupsByWS, string(w.Workspace))
	out := []index{{byWS, byWS.prefix().time(w.At).str(id), id}}
	if w.Session != "" {
		bySession := ownedList(tWakeupsBySession, string(w.Session))
		out = append(out, index{bySession, bySession.prefix().time(w.At).str(id), id})
	}
	if w.Status == store.WakeupPending {
		out = append(out, index{dueList, dueList.prefix().time(w.At).str(id), id})
	}
	return out
}

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	return getRecord[wakeupRow](t, recordKey(tWakeup, id), "wakeup", id)
}

// PutWakeup inserts or replaces w, moving its index entries when its
// session, At or status change; baton.ErrInvalid if ID or Workspace is
// empty.
func (t *tx) PutWakeup(w store.Wakeup) error {
	k := recordKey(tWakeup, w.ID)
	cur, found, err := current[wakeupRow](t, "PutWakeup", k, backend.Required(pkg, "wakeup", "ID", w.ID), backend.Required(pkg, "wakeup", "Workspace", w.Workspace))
	if err != nil {
		return err
	}
	return putRecord(t, k, toWakeup(w), cur, found, 0, "", 0, wakeupIndexes, "")
}

// ListWakeups returns the wakeups of ws, any status, ordered by (At, ID);
// with pinned != "" only those pinned to it, from the session's list.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if pinned == "" {
		return listed(t, ownedList(tWakeupsByWS, string(ws)), nil, 0, tWakeup, wakeupRow.record)
	}
	out, err := listed(t, ownedList(tWakeupsBySession, string(pinned)), nil, 0, tWakeup, wakeupRow.record)
	return slices.DeleteFunc(out, func(w store.Wakeup) bool { return w.Workspace != ws }), err
}

// DueWakeups returns the pending wakeups with At <= now ordered by (At, ID),
// at most limit of them (limit <= 0: all). It reads the due list up to the
// first entry after now, and nothing else.
func (t *tx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	return listed(t, dueList, dueList.prefix().time(now), limit, tWakeup, wakeupRow.record)
}

// queuedList holds the queued continuations of every workspace, oldest
// first: by CreatedAt, then workspace and insert number.
var queuedList = globalList(tQueued)

// continuationIndexes are the entries of c: in its workspace's list by
// insert number, and in the queue while queued. A continuation that leaves
// the queue and comes back gets its old place (the key is the same).
func continuationIndexes(c continuationRow) []index {
	out := []index{seqIndex(tContsByWS, c.Workspace, c.Seq, c.ID)}
	if c.State == store.ContinuationQueued {
		id := string(c.ID)
		out = append(out, index{queuedList, queuedList.prefix().time(c.CreatedAt).str(string(c.Workspace)).u64(c.Seq).str(id), id})
	}
	return out
}

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	return getRecord[continuationRow](t, recordKey(tContinuation, id), "continuation", id)
}

// PutContinuation inserts or replaces c; a stored one keeps its insert
// number (its place in ListContinuations and in the queue).
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutContinuation(c store.Continuation) error {
	k := recordKey(tContinuation, c.ID)
	cur, found, seq, err := currentSeq[continuationRow](t, "PutContinuation", k, tContsByWS, c.Workspace, backend.Required(pkg, "continuation", "ID", c.ID), backend.Required(pkg, "continuation", "Workspace", c.Workspace))
	if err != nil {
		return err
	}
	return putRecord(t, k, toContinuation(c, seq), cur, found, tContsByWS, c.Workspace, seq, continuationIndexes, "")
}

// QueuedContinuations returns the continuations in state queued, oldest
// (CreatedAt, then workspace and insert order) first, reading only those.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	return listed(t, queuedList, nil, 0, tContinuation, continuationRow.record)
}

// ListContinuations returns the continuations of ws, any state, in insert
// order.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	return listed(t, ownedList(tContsByWS, string(ws)), nil, 0, tContinuation, continuationRow.record)
}

// liveList holds the live launches of every workspace, oldest first: by
// CreatedAt, then workspace and insert number.
var liveList = globalList(tLive)

// launchIndexes is the entry of a live launch in the global live list; a
// launch that is not live has none. The live launches of one workspace
// are a per-workspace set instead (liveLaunches, see tx.moveMember).
func launchIndexes(l launchRow) []index {
	if l.Gone {
		return nil
	}
	id := string(l.ID)
	return []index{{liveList, liveList.prefix().time(l.CreatedAt).str(string(l.Workspace)).u64(l.Seq).str(id), id}}
}

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return getRecord[launchRow](t, recordKey(tLaunch, id), "launch", id)
}

// PutLaunch inserts or replaces l; a stored one keeps its insert number.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutLaunch(l store.Launch) error {
	k := recordKey(tLaunch, l.ID)
	cur, found, seq, err := currentSeq[launchRow](t, "PutLaunch", k, tLaunchSeq, l.Workspace, backend.Required(pkg, "launch", "ID", l.ID), backend.Required(pkg, "launch", "Workspace", l.Workspace))
	if err != nil {
		return err
	}
	v := toLaunch(l, seq)
	return putRecord(t, k, v, cur, found, tLaunchSeq, l.Workspace, seq, launchIndexes, "",
		func() error { return t.moveMember(liveLaunches, cur.member(), v.member()) },
	)
}

// LiveLaunches returns the live launches of ws in insert order, or with
// ws == "" those of every workspace oldest (CreatedAt, then workspace and
// insert order) first, reading only those: for one workspace the one
// value that lists them (see liveLaunches) and their records, for every
// workspace the global list.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	if ws == "" {
		return listed(t, liveList, nil, 0, tLaunch, launchRow.record)
	}
	return listedSet(t, liveLaunches, ws, tLaunch, launchRow.record)
}

// instructionIndex is the entry of i in the instructions of its workspace,
// by insert number.
func instructionIndex(i instructionRow) []index {
	return []index{seqIndex(tInstrByWS, i.Workspace, i.Seq, i.ID)}
}

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return getRecord[instructionRow](t, recordKey(tInstruction, id), "instruction", id)
}

// PutInstruction inserts or replaces i (a stored one keeps its place in
// ListInstructions) and adds at commit a change to its workspace's feed.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutInstruction(i store.Instruction) error {
	k := recordKey(tInstruction, i.ID)
	cur, found, seq, err := currentSeq[instructionRow](t, "PutInstruction", k, tInstrByWS, i.Workspace, backend.Required(pkg, "instruction", "ID", i.ID), backend.Required(pkg, "instruction", "Workspace", i.Workspace))
	if err != nil {
		return err
	}
	v := toInstruction(i, seq)
	return putRecord(t, k, v, cur, found, tInstrByWS, i.Workspace, seq, instructionIndex, "instruction",
		func() error { return t.moveMember(openInstructions, cur.member(), v.member()) },
	)
}

// ListInstructions returns the instructions of ws, any state, in insert
// order.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return listed(t, ownedList(tInstrByWS, string(ws)), nil, 0, tInstruction, instructionRow.record)
}

// OpenInstructions returns the open instructions of ws (pending or
// unknown), in insert order as ListInstructions, reading only those: the
// one value that lists them (see openInstructions) and their records.
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return listedSet(t, openInstructions, ws, tInstruction, instructionRow.record)
}
