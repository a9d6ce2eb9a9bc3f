package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

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
