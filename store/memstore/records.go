package memstore

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// GetWorkspace returns the workspace id; store.ErrNotFound if absent.
func (t *tx) GetWorkspace(id baton.WorkspaceID) (store.Workspace, error) {
	return get(t, t.st.workspaces, "workspace", id)
}

// PutWorkspace inserts or replaces w; baton.ErrInvalid if the id is empty.
func (t *tx) PutWorkspace(w store.Workspace) error {
	if err := t.begin("PutWorkspace", backend.Required(pkg, "workspace", "ID", w.ID)); err != nil {
		return err
	}
	write(t, &t.st.workspaces, w.ID, records.Workspace(w, records.UTC), 0)
	return nil
}

// ListWorkspaces returns every workspace, sorted by ID.
func (t *tx) ListWorkspaces() ([]store.Workspace, error) {
	return list(t, t.st.workspaces, maps.Keys(t.st.workspaces), func(a, b row[store.Workspace]) int { return cmp.Compare(a.r.ID, b.r.ID) })
}

// GetReservation returns the reservation row of ws; store.ErrNotFound if
// none was ever put.
func (t *tx) GetReservation(ws baton.WorkspaceID) (store.Reservation, error) {
	return get(t, t.st.reservations, "reservation of workspace", ws)
}

// PutReservation inserts or replaces the row of r.Workspace;
// baton.ErrInvalid if r.Workspace is empty.
func (t *tx) PutReservation(r store.Reservation) error {
	if err := t.begin("PutReservation", backend.Required(pkg, "reservation", "Workspace", r.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.reservations, r.Workspace, records.Reservation(r, records.UTC), 0)
	return nil
}

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	return get(t, t.st.sessions, "session", id)
}

// PutSession inserts s with the next Seq (whatever s.Seq says) or replaces
// it keeping its stored Seq; baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutSession(s store.Session) error {
	if err := t.begin("PutSession", backend.Required(pkg, "session", "ID", s.ID), backend.Required(pkg, "session", "Workspace", s.Workspace)); err != nil {
		return err
	}
	s = records.Session(s, records.UTC)
	s.Seq = insertSeq(t, t.st.sessions, s.ID)
	write(t, &t.st.sessions, s.ID, s, s.Seq)
	t.changes.Add(s.ID, store.Change{Workspace: s.Workspace, Session: &s})
	return nil
}

// ListSessions returns the sessions of ws in creation order (ascending Seq),
// reading only those.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	return list(t, t.st.sessions, maps.Keys(t.st.sessionsByWS[ws]), bySeq)
}

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

// wakeupKey is a wakeup's place in (At, ID) order.
type wakeupKey struct {
	at time.Time
	id baton.WakeupID
}

func compareWakeupKeys(a, b wakeupKey) int {
	return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.id, b.id))
}

func byAtID(a, b row[store.Wakeup]) int {
	return compareWakeupKeys(wakeupKey{a.r.At, a.r.ID}, wakeupKey{b.r.At, b.r.ID})
}

func (s *state) indexWakeup(w store.Wakeup, in bool) {
	s.wakeupsByWS.set(w.Workspace, w.ID, in)
	if w.Session != "" {
		s.wakeupsBySession.set(w.Session, w.ID, in)
	}
	if w.Status != store.WakeupPending {
		return
	}
	k := wakeupKey{w.At, w.ID}
	switch i, found := slices.BinarySearchFunc(s.due, k, compareWakeupKeys); {
	case in:
		s.due = slices.Insert(s.due, i, k)
	case found:
		s.due = slices.Delete(s.due, i, i+1)
	}
}

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	return get(t, t.st.wakeups, "wakeup", id)
}

// PutWakeup inserts or replaces w; baton.ErrInvalid if ID or Workspace is
// empty.
func (t *tx) PutWakeup(w store.Wakeup) error {
	if err := t.begin("PutWakeup", backend.Required(pkg, "wakeup", "ID", w.ID), backend.Required(pkg, "wakeup", "Workspace", w.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.wakeups, w.ID, records.Wakeup(w, records.UTC), 0)
	return nil
}

// ListWakeups returns the wakeups of ws, any status, ordered by (At, ID);
// with pinned != "" only those pinned to it, from the session's index.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if pinned == "" {
		return list(t, t.st.wakeups, maps.Keys(t.st.wakeupsByWS[ws]), byAtID)
	}
	out, err := list(t, t.st.wakeups, maps.Keys(t.st.wakeupsBySession[pinned]), byAtID)
	return slices.DeleteFunc(out, func(w store.Wakeup) bool { return w.Workspace != ws }), err
}

// DueWakeups returns the pending wakeups with At <= now ordered by (At, ID),
// at most limit of them (limit <= 0: all). It reads only what it returns.
func (t *tx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var out []store.Wakeup
	for _, k := range t.st.due {
		if k.at.After(now) || (limit > 0 && len(out) == limit) {
			break
		}
		out = append(out, t.st.wakeups[k.id].r)
	}
	return out, nil
}

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	return get(t, t.st.continuations, "continuation", id)
}

// PutContinuation inserts or replaces c; a stored one keeps its creation
// order. baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutContinuation(c store.Continuation) error {
	if err := t.begin("PutContinuation", backend.Required(pkg, "continuation", "ID", c.ID), backend.Required(pkg, "continuation", "Workspace", c.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.continuations, c.ID, records.Continuation(c, records.UTC), insertSeq(t, t.st.continuations, c.ID))
	return nil
}

// QueuedContinuations returns the continuations in state queued, oldest
// (first inserted) first, reading only those.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	return list(t, t.st.continuations, maps.Keys(t.st.queued), bySeq)
}

// ListContinuations returns the continuations of ws, any state, oldest
// first.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	return list(t, t.st.continuations, maps.Keys(t.st.contsByWS[ws]), bySeq)
}

func (s *state) indexLaunch(l store.Launch, in bool) {
	live := in && !l.Gone
	s.live.set(l.ID, live)
	s.liveByWS.set(l.Workspace, l.ID, live)
}

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return get(t, t.st.launches, "launch", id)
}

// PutLaunch inserts or replaces l; a stored one keeps its creation order.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutLaunch(l store.Launch) error {
	if err := t.begin("PutLaunch", backend.Required(pkg, "launch", "ID", l.ID), backend.Required(pkg, "launch", "Workspace", l.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.launches, l.ID, records.Launch(l, records.UTC), insertSeq(t, t.st.launches, l.ID))
	return nil
}

// LiveLaunches returns the launches not gone (live) of ws (ws == "": of
// every workspace), oldest (first inserted) first, reading only those.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	ids := t.st.live
	if ws != "" {
		ids = t.st.liveByWS[ws]
	}
	return list(t, t.st.launches, maps.Keys(ids), bySeq)
}

func (s *state) indexInstruction(i store.Instruction, in bool) {
	s.instrByWS.set(i.Workspace, i.ID, in)
	s.openByWS.set(i.Workspace, i.ID, in && i.State.Open())
}

// GetInstruction returns the instruction id; store.ErrNotFound if absent.
func (t *tx) GetInstruction(id baton.InstructionID) (store.Instruction, error) {
	return get(t, t.st.instructions, "instruction", id)
}

// PutInstruction inserts or replaces i (a stored one keeps its place in
// ListInstructions) and adds a change to its workspace's feed.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutInstruction(i store.Instruction) error {
	if err := t.begin("PutInstruction", backend.Required(pkg, "instruction", "ID", i.ID), backend.Required(pkg, "instruction", "Workspace", i.Workspace)); err != nil {
		return err
	}
	i = records.Instruction(i, records.UTC)
	write(t, &t.st.instructions, i.ID, i, insertSeq(t, t.st.instructions, i.ID))
	t.changes.Add(i.ID, store.Change{Workspace: i.Workspace, Instruction: &i})
	return nil
}

// ListInstructions returns the instructions of ws, any state, oldest
// (first inserted) first.
func (t *tx) ListInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return t.instructionsIn(t.st.instrByWS, ws)
}

// OpenInstructions returns the pending and unknown instructions of ws,
// oldest first, from an index that holds only those.
func (t *tx) OpenInstructions(ws baton.WorkspaceID) ([]store.Instruction, error) {
	return t.instructionsIn(t.st.openByWS, ws)
}

// instructionsIn returns the instructions idx holds for ws, oldest first.
func (t *tx) instructionsIn(idx index[baton.WorkspaceID, baton.InstructionID], ws baton.WorkspaceID) ([]store.Instruction, error) {
	return list(t, t.st.instructions, maps.Keys(idx[ws]), bySeq)
}
