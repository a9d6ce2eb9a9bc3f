package pgstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// sessions: seq is an identity column the server sets on insert, so it
// is read (the read-only column) but never written.
var sessions = newTable(kindSession, "sessions",
	[]string{"id", "workspace", "config", "native_id", "actual_model", "engine_version", "status", "activation_order", "started_at",
		"ended_at", "end_reason", "created_at", "rank_above", "rank_below",
		"context_tokens", "context_window", "usage_launch", "pressure"},
	func(s *store.Session) []any {
		return []any{&s.ID, &s.Workspace, &s.Config, &s.NativeID, &s.ActualModel, &s.EngineVersion, &s.Status, &s.ActivationOrder,
			&s.StartedAt, &s.EndedAt, &s.EndReason, &s.CreatedAt, &s.RankAbove, &s.RankBelow,
			&s.Usage.Tokens, &s.Usage.Window, &s.Usage.Launch, &s.Pressure, &s.Seq}
	},
	func(s store.Session) baton.WorkspaceID { return s.Workspace },
	"seq")

var sessionUpsertSQL = sessions.upsertSQL + " RETURNING seq"

// GetSession returns the session id; store.ErrNotFound if absent.
func (t *tx) GetSession(id baton.SessionID) (store.Session, error) {
	s, err := get(t, sessions, string(id))
	if err == nil {
		t.seeSession(s)
	}
	return s, err
}

// seeSession remembers the Seq of s (that s exists).
func (t *tx) seeSession(s store.Session) {
	if t.sessionSeqs == nil {
		t.sessionSeqs = map[baton.SessionID]int64{}
	}
	t.sessionSeqs[s.ID] = s.Seq
}

// PutSession inserts s with the next Seq (an identity column, growing in
// insert order across the schema) or replaces it keeping its stored Seq;
// baton.ErrInvalid for an empty ID or Workspace.
func (t *tx) PutSession(s store.Session) error {
	if err := t.checkPut("PutSession", backend.Required(pkg, kindSession, "ID", s.ID), backend.Required(pkg, kindSession, "Workspace", s.Workspace)); err != nil {
		return err
	}
	if seq, ok := t.sessionSeqs[s.ID]; ok {
		s.Seq = seq
		t.queue(s.Workspace, sessions.updateSQL, sessions.args(s)...)
	} else {
		t.lock(s.Workspace)
		// Not seen here: write now, to learn its Seq for the change feed.
		if err := t.queryRow("put session", sessionUpsertSQL, sessions.args(s), &s.Seq); err != nil {
			return err
		}
		t.seeSession(s)
	}
	t.changes(s.Workspace, kindSession, string(s.ID), s)
	return nil
}

// ListSessions returns the sessions of ws in creation order.
func (t *tx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	out, err := list(t, sessions, ws, "WHERE workspace = $1 ORDER BY seq", string(ws))
	for _, s := range out {
		t.seeSession(s)
	}
	return out, err
}
