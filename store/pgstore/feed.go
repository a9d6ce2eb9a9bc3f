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

// A workspace's changes are numbered 1, 2, 3... in commit order, without
// a gap: each commit that appends to a workspace's feed numbers its
// changes from one more than the workspace's highest Seq, which it reads
// from the primary key of changes or takes from the Store's row cache (the
// last Seq a commit of this Store returned). The primary key (workspace,
// seq) is what keeps the order. Each committed Seq is one above a
// committed one, so an Update that numbers from a Seq that is not the
// highest any more (a stale cache, a snapshot older than the last commit)
// finds its first Seq taken: the insert fails, on a unique violation or a
// serialization failure, and the Update runs again; and an Update that
// numbers from the highest one either commits before any other can number
// after it, or, when another inserts the same Seq at once, waits for that
// one to end and fails if it committed.

// appendFeedSQL appends one change per record ($3 kinds, $4 records as
// JSON) to the feed of workspace $1, numbered from $2, or from the
// workspace's highest Seq when $2 is NULL, and returns their Seqs.
const appendFeedSQL = `INSERT INTO changes (workspace, seq, kind, record)
SELECT $1, coalesce($2::bigint, (SELECT max(seq) FROM changes WHERE workspace = $1), 0) + c.n, c.kind, c.record
FROM unnest($3::text[], $4::json[]) WITH ORDINALITY AS c(kind, record, n)
RETURNING seq`

// appendAtSQL appends one change ($3 its kind, $4 the record) to the feed
// of workspace $1 at Seq $2: a transaction's one change, numbered from the
// Seq the row cache holds.
const appendAtSQL = `INSERT INTO changes (workspace, seq, kind, record) VALUES ($1, $2, $3, $4::json)`

// changesKey is the primary key of changes: a violation of it is an
// Update that numbered its changes from a Seq that was not the last.
const changesKey = "changes_pkey"

// feedHead is the value of a workspace's row of the row cache under
// kindFeed: the row's version is the workspace's last Seq.
type feedHead struct{}

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
	_, err := t.queryRow("last seq", "SELECT coalesce(max(seq), 0) FROM changes WHERE workspace = $1", []any{string(ws)},
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
