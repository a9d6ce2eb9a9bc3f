package memstore

import (
	"maps"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

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
