package pgstore

import (
	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// sessions: seq is an identity column the server sets on insert, so it
// is read (the read-only column) but never written.
var sessions = newTable(kindSession, "sessions",
	[]string{"id", "workspace", "config", "native_id", "status", "activation_order", "started_at", "ended_at", "end_reason", "created_at",
		"rank_above", "rank_below"},
	func(row pgx.Row) (store.Session, error) {
		var s store.Session
		err := row.Scan(&s.ID, &s.Workspace, &s.Config, &s.NativeID, &s.Status, &s.ActivationOrder,
			&s.StartedAt, &s.EndedAt, &s.EndReason, &s.CreatedAt, &s.RankAbove, &s.RankBelow, &s.Seq)
		return s, err
	},
	func(s store.Session) []any {
		return []any{string(s.ID), string(s.Workspace), s.Config, s.NativeID, string(s.Status), s.ActivationOrder,
			s.StartedAt, s.EndedAt, s.EndReason, s.CreatedAt, string(s.RankAbove), string(s.RankBelow)}
	},
	"seq")

var sessionInsertSQL = sessions.insertSQL + " RETURNING seq"

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	var s store.Session
	if err := t.readable(); err != nil {
		return s, err
	}
	found, err := t.queryRow("get session", sessions.getSQL, []any{string(id)}, func(row pgx.Row) error {
		var err error
		s, err = sessions.scan(row)
		return err
	})
	if err != nil {
		return s, err
	}
	if !found {
		return s, notFound(kindSession, id)
	}
	t.seeSession(s)
	return s, nil
}

// seeSession remembers that s exists, and its Seq.
func (t *tx) seeSession(s store.Session) {
	t.see(kindSession, string(s.ID))
	if t.sessionSeqs == nil {
		t.sessionSeqs = map[baton.SessionID]int64{}
	}
	t.sessionSeqs[s.ID] = s.Seq
}

// InsertSession adds s with the next Seq (an identity column, growing in
// insert order across the schema) and returns it as stored.
// store.ErrDuplicate if its id exists; baton.ErrInvalid for an empty ID or
// Workspace.
func (t *tx) InsertSession(s store.Session) (store.Session, error) {
	if err := t.writable("InsertSession"); err != nil {
		return store.Session{}, err
	}
	if err := firstErr(required(kindSession, "ID", s.ID), required(kindSession, "Workspace", s.Workspace)); err != nil {
		return store.Session{}, err
	}
	found, err := t.queryRow("insert session", sessionInsertSQL, sessions.args(s), func(row pgx.Row) error {
		return row.Scan(&s.Seq)
	})
	if err != nil {
		return store.Session{}, err
	}
	if !found {
		return store.Session{}, duplicate(kindSession, s.ID)
	}
	t.seeSession(s)
	t.changes(s.Workspace, kindSession, string(s.ID), s)
	return s, nil
}

// PutSession replaces s, keeping its stored Seq; store.ErrNotFound if
// absent, baton.ErrInvalid for an empty ID or Workspace.
func (t *tx) PutSession(s store.Session) error {
	if err := t.writable("PutSession"); err != nil {
		return err
	}
	if err := firstErr(required(kindSession, "ID", s.ID), required(kindSession, "Workspace", s.Workspace)); err != nil {
		return err
	}
	if seq, ok := t.sessionSeqs[s.ID]; ok {
		s.Seq = seq
		t.queue(sessions.updateSQL, sessions.args(s)...)
	} else {
		// Not seen here: write now, to learn whether it exists, and its
		// Seq for the change feed.
		found, err := t.queryRow("put session", sessions.updateSQL+" RETURNING seq", sessions.args(s),
			func(row pgx.Row) error { return row.Scan(&s.Seq) })
		if err != nil {
			return err
		}
		if !found {
			return notFound(kindSession, s.ID)
		}
		t.seeSession(s)
	}
	t.changes(s.Workspace, kindSession, string(s.ID), s)
	return nil
}

// ListSessions returns the sessions of ws in creation order.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var out []store.Session
	err := t.query("list sessions", sessions.selectSQL+" WHERE workspace = $1 ORDER BY seq", []any{string(ws)}, func(rows pgx.Rows) error {
		s, err := sessions.scan(rows)
		if err != nil {
			return err
		}
		t.seeSession(s)
		out = append(out, s)
		return nil
	})
	return out, err
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
