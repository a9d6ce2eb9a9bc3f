package pgstore

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// appendFeedSQL appends one change per record ($2 kinds, $3 ids) to the
// feed of workspace $1, numbered after its head, which it advances. It
// runs last before COMMIT: the row lock on the head orders the commits of
// a workspace, so Seq grows in commit order, and each change holds its
// row as the transaction leaves it (to_jsonb of the row, decoded by
// decodeChange).
const appendFeedSQL = `WITH c AS (
	SELECT * FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS c(kind, id, n)
), head AS (
	INSERT INTO feed_heads AS f (workspace, last_seq) VALUES ($1, cardinality($2::text[]))
	ON CONFLICT (workspace) DO UPDATE SET last_seq = f.last_seq + cardinality($2::text[])
	RETURNING last_seq
)
INSERT INTO changes (workspace, seq, kind, record)
SELECT $1, head.last_seq - cardinality($2::text[]) + c.n, c.kind, CASE c.kind
	WHEN 'handoff' THEN (SELECT to_jsonb(r) FROM handoffs r WHERE r.id = c.id)
	WHEN 'session' THEN (SELECT to_jsonb(r) FROM sessions r WHERE r.id = c.id)
	WHEN 'instruction' THEN (SELECT to_jsonb(r) FROM instructions r WHERE r.id = c.id)
	END
FROM head, c`

func splitKeys(keys []recordKey) (kinds, ids []string) {
	kinds = make([]string, len(keys))
	ids = make([]string, len(keys))
	for i, k := range keys {
		kinds[i], ids[i] = k.kind, k.id
	}
	return kinds, ids
}

// Changes returns the change feed of ws after seq after, in ascending
// Seq, at most limit entries (limit <= 0: all). Inside an Update the
// transaction's own changes are not listed: they are appended at commit.
func (t *tx) Changes(ws baton.WorkspaceID, after int64, limit int) ([]store.Change, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	sql := "SELECT seq, kind, record FROM changes WHERE workspace = $1 AND seq > $2 ORDER BY seq"
	args := []any{string(ws), after}
	if limit > 0 {
		sql += " LIMIT $3"
		args = append(args, limit)
	}
	var out []store.Change
	err := t.query("changes", sql, args, func(rows pgx.Rows) error {
		c := store.Change{Workspace: ws}
		var record []byte
		if err := rows.Scan(&c.Seq, &c.Kind, &record); err != nil {
			return err
		}
		if err := decodeChange(&c, record); err != nil {
			return err
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// LastSeq returns the highest committed Seq of ws, 0 when it has none.
func (t *tx) LastSeq(ws baton.WorkspaceID) (int64, error) {
	if err := t.readable(); err != nil {
		return 0, err
	}
	var seq int64
	_, err := t.queryRow("last seq", "SELECT last_seq FROM feed_heads WHERE workspace = $1", []any{string(ws)},
		func(row pgx.Row) error { return row.Scan(&seq) })
	return seq, err
}

// byteaJSON is a bytea as to_jsonb renders it: "\\x" and hex digits.
type byteaJSON []byte

func (b *byteaJSON) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	raw, err := hex.DecodeString(strings.TrimPrefix(s, `\x`))
	*b = raw
	return err
}

// The rows of the change feed, as to_jsonb renders them (column names as
// keys, timestamps in RFC 3339 since the connections use UTC).
type (
	sessionJSON struct {
		ID              baton.SessionID     `json:"id"`
		Seq             int64               `json:"seq"`
		Workspace       baton.WorkspaceID   `json:"workspace"`
		Config          baton.EngineConfig  `json:"config"`
		NativeID        string              `json:"native_id"`
		Status          store.SessionStatus `json:"status"`
		ActivationOrder int64               `json:"activation_order"`
		StartedAt       time.Time           `json:"started_at"`
		EndedAt         time.Time           `json:"ended_at"`
		EndReason       string              `json:"end_reason"`
		CreatedAt       time.Time           `json:"created_at"`
	}
	handoffJSON struct {
		ID                 baton.HandoffID       `json:"id"`
		Workspace          baton.WorkspaceID     `json:"workspace"`
		RequestID          string                `json:"request_id"`
		Fingerprint        string                `json:"fingerprint"`
		State              store.HandoffState    `json:"state"`
		Attempt            int                   `json:"attempt"`
		SourceSession      baton.SessionID       `json:"source_session"`
		TargetSession      baton.SessionID       `json:"target_session"`
		SourceConfig       baton.EngineConfig    `json:"source_config"`
		TargetConfig       baton.EngineConfig    `json:"target_config"`
		GenerateSummary    bool                  `json:"generate_summary"`
		Native             bool                  `json:"native"`
		Report             string                `json:"report"`
		ReportPath         string                `json:"report_path"`
		Facts              string                `json:"facts"`
		GenerationToken    byteaJSON             `json:"generation_token"`
		GenerationDeadline time.Time             `json:"generation_deadline"`
		Error              string                `json:"error"`
		StopRequested      bool                  `json:"stop_requested"`
		StopUnconfirmed    bool                  `json:"stop_unconfirmed"`
		History            []store.AttemptRecord `json:"history"`
		CreatedAt          time.Time             `json:"created_at"`
		UpdatedAt          time.Time             `json:"updated_at"`
	}
	instructionJSON struct {
		ID        baton.InstructionID    `json:"id"`
		Workspace baton.WorkspaceID      `json:"workspace"`
		Text      string                 `json:"text"`
		State     store.InstructionState `json:"state"`
		Session   baton.SessionID        `json:"session"`
		CreatedAt time.Time              `json:"created_at"`
		UpdatedAt time.Time              `json:"updated_at"`
	}
)

// decodeChange fills the record of c from its feed row.
func decodeChange(c *store.Change, record []byte) error {
	bad := func(err error) error {
		return fmt.Errorf("%w: change %d of workspace %q: %w", ErrDatabase, c.Seq, c.Workspace, err)
	}
	switch c.Kind {
	case store.ChangeSession:
		var r sessionJSON
		if err := json.Unmarshal(record, &r); err != nil {
			return bad(err)
		}
		c.Session = &store.Session{
			ID: r.ID, Workspace: r.Workspace, Config: r.Config, NativeID: r.NativeID, Status: r.Status,
			ActivationOrder: r.ActivationOrder, StartedAt: r.StartedAt, EndedAt: r.EndedAt, EndReason: r.EndReason,
			CreatedAt: r.CreatedAt, Seq: r.Seq,
		}
	case store.ChangeHandoff:
		var r handoffJSON
		if err := json.Unmarshal(record, &r); err != nil {
			return bad(err)
		}
		token, err := tokenHash(r.GenerationToken)
		if err != nil {
			return bad(err)
		}
		c.Handoff = &store.Handoff{
			ID: r.ID, Workspace: r.Workspace, RequestID: r.RequestID, Fingerprint: r.Fingerprint, State: r.State,
			Attempt: r.Attempt, SourceSession: r.SourceSession, TargetSession: r.TargetSession,
			SourceConfig: r.SourceConfig, TargetConfig: r.TargetConfig, GenerateSummary: r.GenerateSummary,
			Native: r.Native, Report: r.Report, ReportPath: r.ReportPath, Facts: r.Facts, GenerationToken: token,
			GenerationDeadline: r.GenerationDeadline, Error: r.Error, StopRequested: r.StopRequested,
			StopUnconfirmed: r.StopUnconfirmed, History: r.History, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		}
	case store.ChangeInstruction:
		var r instructionJSON
		if err := json.Unmarshal(record, &r); err != nil {
			return bad(err)
		}
		c.Instruction = &store.Instruction{
			ID: r.ID, Workspace: r.Workspace, Text: r.Text, State: r.State, Session: r.Session,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		}
	default:
		return bad(fmt.Errorf("unknown kind %q", c.Kind))
	}
	return nil
}
