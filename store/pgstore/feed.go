package pgstore

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// A workspace's changes are numbered 1, 2, 3... in commit order, without
// a gap: each commit that appends to a workspace's feed holds the
// workspace's lock (every write takes it), and numbers its changes from
// one more than the workspace's highest Seq, which it reads from the
// primary key of changes, under the lock, at READ COMMITTED: the last
// commit of the workspace is visible to it, and no other can commit
// changes of the workspace until it has.

// appendFeedSQL appends one change per record ($2 kinds, $3 records as
// JSON) to the feed of workspace $1, numbered from the workspace's
// highest Seq.
const appendFeedSQL = `INSERT INTO changes (workspace, seq, kind, record)
SELECT $1, coalesce((SELECT max(seq) FROM changes WHERE workspace = $1), 0) + c.n, c.kind, c.record
FROM unnest($2::text[], $3::json[]) WITH ORDINALITY AS c(kind, record, n)`

// feedEntry is a record of the transaction's change feed and its last
// value (a store.Handoff, store.Session or store.Instruction), written in
// workspace ws.
type feedEntry struct {
	ws  baton.WorkspaceID
	key recordKey
	rec any
}

// encodeFeed returns the kinds and JSON encodings of a workspace's feed
// entries. A record is encoded as the store keeps it, with times in UTC
// to the microsecond, so that a change equals what a read returns; its
// zero fields are left out (the store types' tags), so a change row holds
// what the record has, not its every field.
func encodeFeed(entries []feedEntry) (kinds []string, bodies [][]byte) {
	kinds = make([]string, len(entries))
	bodies = make([][]byte, len(entries))
	for i, e := range entries {
		kinds[i] = e.key.kind
		var v any
		switch r := e.rec.(type) {
		case store.Handoff:
			v = records.Handoff(r, records.Micro)
		case store.Session:
			v = records.Session(r, records.Micro)
		case store.Instruction:
			v = records.Instruction(r, records.Micro)
		}
		bodies[i], _ = json.Marshal(v) // plain structs of strings, numbers and times in range
	}
	return kinds, bodies
}

// Changes returns the change feed of ws after seq after, in ascending
// Seq, at most limit entries (limit <= 0: all). Inside an Update the
// transaction's own changes are not listed: they are appended at commit.
func (t *tx) Changes(ws baton.WorkspaceID, after int64, limit int) ([]store.Change, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	t.lock(ws)
	sql := "SELECT seq, kind, record FROM changes WHERE workspace = $1 AND seq > $2 ORDER BY seq"
	args := []any{string(ws), after}
	if limit > 0 {
		sql += " LIMIT $3"
		args = append(args, limit)
	}
	var out []store.Change
	err := t.query("changes", sql, args, func(rows pgx.Rows) error {
		c := store.Change{Workspace: ws}
		var kind string
		var record []byte
		if err := rows.Scan(&c.Seq, &kind, &record); err != nil {
			return err
		}
		if err := decodeChange(&c, kind, record); err != nil {
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
	t.lock(ws)
	var seq int64
	err := t.queryRow("last seq", "SELECT coalesce(max(seq), 0) FROM changes WHERE workspace = $1", []any{string(ws)}, &seq)
	return seq, err
}

// decodeChange fills the record of c, of the kind the changes row names,
// from its JSON.
func decodeChange(c *store.Change, kind string, record []byte) error {
	var err error
	switch kind {
	case kindSession:
		c.Session = new(store.Session)
		err = json.Unmarshal(record, c.Session)
	case kindHandoff:
		c.Handoff = new(store.Handoff)
		err = json.Unmarshal(record, c.Handoff)
	case kindInstruction:
		c.Instruction = new(store.Instruction)
		err = json.Unmarshal(record, c.Instruction)
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	if err != nil {
		return fmt.Errorf("%w: change %d of workspace %q: %w", ErrDatabase, c.Seq, c.Workspace, err)
	}
	return nil
}
