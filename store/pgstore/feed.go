package pgstore

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// appendFeedSQL appends one change per record ($2 kinds, $3 records as
// JSON) to the feed of workspace $1, numbered after its head, which it
// advances. It runs last before COMMIT: the row lock on the head orders
// the commits of a workspace, so Seq grows in commit order.
const appendFeedSQL = `WITH head AS (
	INSERT INTO feed_heads AS f (workspace, last_seq) VALUES ($1, cardinality($2::text[]))
	ON CONFLICT (workspace) DO UPDATE SET last_seq = f.last_seq + cardinality($2::text[])
	RETURNING last_seq
)
INSERT INTO changes (workspace, seq, kind, record)
SELECT $1, head.last_seq - cardinality($2::text[]) + c.n, c.kind, c.record
FROM head, unnest($2::text[], $3::json[]) WITH ORDINALITY AS c(kind, record, n)`

// appendOneSQL is appendFeedSQL for a single record ($2 its kind, $3 the
// record), without arrays (cheaper to encode and to run).
const appendOneSQL = `WITH head AS (
	INSERT INTO feed_heads AS f (workspace, last_seq) VALUES ($1, 1)
	ON CONFLICT (workspace) DO UPDATE SET last_seq = f.last_seq + 1
	RETURNING last_seq
)
INSERT INTO changes (workspace, seq, kind, record) SELECT $1, head.last_seq, $2, $3::json FROM head`

// feedEntry is a record of the transaction's change feed and its last
// value (a store.Handoff, store.Session or store.Instruction).
type feedEntry struct {
	key recordKey
	rec any
}

// encodeFeed returns the kinds and JSON encodings of a workspace's feed
// entries. A record is encoded as the store keeps it, with times in UTC
// to the microsecond, so that a change equals what a read returns.
func encodeFeed(entries []feedEntry) (kinds []string, records [][]byte) {
	kinds = make([]string, len(entries))
	records = make([][]byte, len(entries))
	for i, e := range entries {
		kinds[i] = e.key.kind
		var v any
		switch r := e.rec.(type) {
		case store.Handoff:
			r.GenerationDeadline, r.CreatedAt, r.UpdatedAt = stored(r.GenerationDeadline), stored(r.CreatedAt), stored(r.UpdatedAt)
			r.History = slices.Clone(r.History)
			for j := range r.History {
				r.History[j].EndedAt = stored(r.History[j].EndedAt)
			}
			v = handoffRecord(r)
		case store.Session:
			r.StartedAt, r.EndedAt, r.CreatedAt = stored(r.StartedAt), stored(r.EndedAt), stored(r.CreatedAt)
			v = sessionRecord(r)
		case store.Instruction:
			r.CreatedAt, r.UpdatedAt = stored(r.CreatedAt), stored(r.UpdatedAt)
			v = instructionRecord(r)
		}
		records[i], _ = json.Marshal(v) // plain structs of strings, numbers and times in range
	}
	return kinds, records
}

// handoffRecord, sessionRecord and instructionRecord are the records as
// the change feed encodes them: their zero fields are left out, which
// decode as zero all the same, so a change row holds what the record
// has, not its every field (a handoff's change is less than half as
// long). Each is converted from its store type: the compiler refuses the
// conversion if the two types' fields ever differ.
type handoffRecord struct {
	ID                 baton.HandoffID       `json:",omitzero"`
	Workspace          baton.WorkspaceID     `json:",omitzero"`
	RequestID          string                `json:",omitzero"`
	Fingerprint        string                `json:",omitzero"`
	State              store.HandoffState    `json:",omitzero"`
	Attempt            int                   `json:",omitzero"`
	SourceSession      baton.SessionID       `json:",omitzero"`
	TargetSession      baton.SessionID       `json:",omitzero"`
	SourceConfig       baton.EngineConfig    `json:",omitzero"`
	TargetConfig       baton.EngineConfig    `json:",omitzero"`
	GenerateSummary    bool                  `json:",omitzero"`
	Native             bool                  `json:",omitzero"`
	Report             string                `json:",omitzero"`
	ReportPath         string                `json:",omitzero"`
	Facts              string                `json:",omitzero"`
	GenerationToken    baton.TokenHash       `json:",omitzero"`
	GenerationDeadline time.Time             `json:",omitzero"`
	Error              string                `json:",omitzero"`
	StopRequested      bool                  `json:",omitzero"`
	StopUnconfirmed    bool                  `json:",omitzero"`
	History            []store.AttemptRecord `json:",omitzero"`
	CreatedAt          time.Time             `json:",omitzero"`
	UpdatedAt          time.Time             `json:",omitzero"`
}

type sessionRecord struct {
	ID              baton.SessionID     `json:",omitzero"`
	Workspace       baton.WorkspaceID   `json:",omitzero"`
	Config          baton.EngineConfig  `json:",omitzero"`
	NativeID        string              `json:",omitzero"`
	Status          store.SessionStatus `json:",omitzero"`
	ActivationOrder int64               `json:",omitzero"`
	StartedAt       time.Time           `json:",omitzero"`
	EndedAt         time.Time           `json:",omitzero"`
	EndReason       string              `json:",omitzero"`
	CreatedAt       time.Time           `json:",omitzero"`
	Seq             int64               `json:",omitzero"`
	RankAbove       baton.SessionID     `json:",omitzero"`
	RankBelow       baton.SessionID     `json:",omitzero"`
}

type instructionRecord struct {
	ID        baton.InstructionID    `json:",omitzero"`
	Workspace baton.WorkspaceID      `json:",omitzero"`
	Text      string                 `json:",omitzero"`
	State     store.InstructionState `json:",omitzero"`
	Session   baton.SessionID        `json:",omitzero"`
	CreatedAt time.Time              `json:",omitzero"`
	UpdatedAt time.Time              `json:",omitzero"`
}

// stored is t as PostgreSQL keeps it: truncated to the microsecond, and
// read back in UTC.
func stored(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

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

// decodeChange fills the record of c from its JSON.
func decodeChange(c *store.Change, record []byte) error {
	var err error
	switch c.Kind {
	case store.ChangeSession:
		c.Session = new(store.Session)
		err = json.Unmarshal(record, c.Session)
	case store.ChangeHandoff:
		c.Handoff = new(store.Handoff)
		err = json.Unmarshal(record, c.Handoff)
	case store.ChangeInstruction:
		c.Instruction = new(store.Instruction)
		err = json.Unmarshal(record, c.Instruction)
	default:
		err = fmt.Errorf("unknown kind %q", c.Kind)
	}
	if err != nil {
		return fmt.Errorf("%w: change %d of workspace %q: %w", ErrDatabase, c.Seq, c.Workspace, err)
	}
	return nil
}
