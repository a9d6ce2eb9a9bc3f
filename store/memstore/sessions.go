package memstore

import (
	"cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// putSession stores s and moves its index entry.
func (st *state) putSession(s store.Session) {
	st.deleteSession(s.ID)
	st.sessions[s.ID] = s
	st.sessionsByWS.add(s.Workspace, s.ID)
}

func (st *state) deleteSession(id baton.SessionID) {
	if cur, ok := st.sessions[id]; ok {
		st.sessionsByWS.remove(cur.Workspace, id)
		delete(st.sessions, id)
	}
}

func (st *state) restoreSession(id baton.SessionID) func() {
	old, ok := st.sessions[id]
	if !ok {
		return func() { st.deleteSession(id) }
	}
	return func() { st.putSession(old) }
}

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	if err := t.readable(); err != nil {
		return store.Session{}, err
	}
	s, ok := t.st.sessions[id]
	if !ok {
		return store.Session{}, notFound("session", id)
	}
	return s, nil
}

// PutSession inserts s with the next Seq (whatever s.Seq says) or replaces
// it keeping the stored Seq (the store owns it). baton.ErrInvalid if ID or
// Workspace is empty.
func (t *tx) PutSession(s store.Session) error {
	if err := t.begin("PutSession", key("session", "ID", s.ID), key("session", "Workspace", s.Workspace)); err != nil {
		return err
	}
	cur, found := t.st.sessions[s.ID]
	s = records.Session(s, records.UTC)
	s.Seq = t.seqOf(found, cur.Seq)
	t.onUndo(t.st.restoreSession(s.ID))
	t.st.putSession(s)
	t.recordSession(s)
	return nil
}

// ListSessions returns the sessions of ws in creation order (ascending Seq),
// reading only those.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	return collect(t.st.sessionsByWS[ws],
		func(id baton.SessionID) store.Session { return t.st.sessions[id] },
		func(a, b store.Session) int { return cmp.Compare(a.Seq, b.Seq) }), nil
}
