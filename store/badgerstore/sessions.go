package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// sessionIndex is the entry of s in the sessions of its workspace, ordered
// by Seq (the id breaks ties, which only a session moved between
// workspaces can cause).
func sessionIndex(s store.Session) []index {
	l := ownedList(tSessionsByWS, string(s.Workspace))
	return []index{{l, l.prefix().u64(uint64(s.Seq)).str(string(s.ID)), string(s.ID)}}
}

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	return getRecord[sessionV1](t, sessionKey(id), "session", id)
}

// InsertSession adds s with the next Seq of its workspace (whatever s.Seq
// says; the first is 1) and returns the stored record. store.ErrDuplicate
// if its id exists; baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) InsertSession(s store.Session) (store.Session, error) {
	if err := t.writable("InsertSession"); err != nil {
		return store.Session{}, err
	}
	if err := required("session", "ID", s.ID); err != nil {
		return store.Session{}, err
	}
	if err := required("session", "Workspace", s.Workspace); err != nil {
		return store.Session{}, err
	}
	k := sessionKey(s.ID)
	if err := absent(t, k, "session", s.ID); err != nil {
		return store.Session{}, err
	}
	seq, err := t.peekSeq(tSessionsByWS, s.Workspace)
	if err != nil {
		return store.Session{}, err
	}
	s.Seq = int64(seq)
	w := toSession(s)
	b, err := encode(w)
	if err != nil {
		return store.Session{}, err
	}
	stored := w.record()
	if err := firstErrOf(
		func() error { return t.takeSeq(tSessionsByWS, s.Workspace, seq) },
		func() error { return t.setRecord(k, b, w) },
		func() error { return t.reindex(nil, sessionIndex(stored)) },
	); err != nil {
		return store.Session{}, err
	}
	t.recordSession(w, b)
	return stored, nil
}

// PutSession replaces s, keeping the stored Seq (the store owns it).
// store.ErrNotFound if absent; baton.ErrInvalid if ID or Workspace is
// empty. A session moved to another workspace keeps its Seq there.
func (t *tx) PutSession(s store.Session) error {
	if err := t.writable("PutSession"); err != nil {
		return err
	}
	if err := required("session", "ID", s.ID); err != nil {
		return err
	}
	cur, err := stored[sessionV1](t, sessionKey(s.ID), "session", s.ID)
	if err != nil {
		return err
	}
	if err := required("session", "Workspace", s.Workspace); err != nil {
		return err
	}
	s.Seq = cur.Seq
	w := toSession(s)
	b, err := encode(w)
	if err != nil {
		return err
	}
	if err := firstErrOf(
		func() error { return t.setRecord(sessionKey(s.ID), b, w) },
		func() error { return t.reindex(sessionIndex(cur.record()), sessionIndex(s)) },
	); err != nil {
		return err
	}
	t.recordSession(w, b)
	return nil
}

// ListSessions returns the sessions of ws in creation order (ascending
// Seq), reading only those.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	ids, err := t.ids(ownedList(tSessionsByWS, string(ws)), nil, 0)
	if err != nil {
		return nil, err
	}
	return load(t, ids, func(id string) key { return sessionKey(baton.SessionID(id)) }, sessionV1.record)
}
