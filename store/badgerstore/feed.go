package badgerstore

import (
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// pendingChanges are the feed entries of one transaction: one per record,
// its last value, in the order records were first written. They are
// numbered and written by flush, just before the commit.
type pendingChanges = backend.Changes[string, pendingChange]

// pendingChange is a change (its record left out), the field of
// store.Change its record goes in ("handoff", "session" or "instruction")
// and the JSON of the record, as stored under the record's key.
type pendingChange struct {
	c     store.Change
	field string
	body  []byte
}

// recordChange notes that the record under k, of workspace ws and of the
// kind field names, was written as body.
func (t *tx) recordChange(ws baton.WorkspaceID, field string, k key, body []byte) {
	t.changes.Add(string(k), pendingChange{store.Change{Workspace: ws}, field, body})
}

// encodeChange returns the JSON of c with its record, whose JSON is body,
// under field (a tag of store.Change), without encoding the record a
// second time.
func encodeChange(c store.Change, field string, body []byte) ([]byte, error) {
	head, err := encode(c)
	if err != nil {
		return nil, err
	}
	// head without its closing brace, then "field":body}.
	return slices.Concat(head[:len(head)-1], []byte(`,"`+field+`":`), body, []byte("}")), nil
}

// flushChanges numbers the pending changes after the last Seq of their
// workspaces and writes them with the new last Seqs; it returns the
// workspaces whose feed grows. Reading each counter is what orders the
// feed: of two transactions appending to one workspace, the second to
// commit conflicts and re-runs, so Seq follows commit order.
func (t *tx) flushChanges() ([]baton.WorkspaceID, error) {
	if t.changes.Len() == 0 {
		return nil, nil
	}
	next := map[baton.WorkspaceID]uint64{}
	var grown []baton.WorkspaceID
	for pc := range t.changes.All() {
		c := pc.c
		seq, ok := next[c.Workspace]
		if !ok {
			var err error
			if seq, err = t.peekSeq(tFeed, c.Workspace); err != nil {
				return nil, err
			}
			grown = append(grown, c.Workspace)
		}
		c.Seq = int64(seq)
		b, err := encodeChange(c, pc.field, pc.body)
		if err != nil {
			return nil, err
		}
		if err := t.set(feedPrefix(c.Workspace).u64(seq), b); err != nil {
			return nil, err
		}
		next[c.Workspace] = seq + 1
	}
	for _, ws := range grown {
		if err := t.takeSeq(tFeed, ws, next[ws]-1); err != nil {
			return nil, err
		}
	}
	return grown, nil
}

// LastSeq returns the highest committed change Seq of ws (0 when none).
// In an Update it reads the workspace's feed counter, so the transaction
// conflicts with any concurrent one that appends to that feed.
func (t *tx) LastSeq(ws baton.WorkspaceID) (int64, error) {
	if err := t.readable(); err != nil {
		return 0, err
	}
	next, err := t.peekSeq(tFeed, ws)
	return int64(next) - 1, err
}

// Changes returns the committed changes of ws with Seq > after, ascending,
// at most limit (limit <= 0: all), reading only those. Like LastSeq it
// reads the feed counter, which every append writes: a feed read inside an
// Update is serializable without a guard key. The transaction's own
// changes are not listed: they are written when it commits.
func (t *tx) Changes(ws baton.WorkspaceID, after int64, limit int) ([]store.Change, error) {
	last, err := t.LastSeq(ws)
	if err != nil {
		return nil, err
	}
	after = max(after, 0)
	if after >= last {
		return nil, nil
	}
	prefix := feedPrefix(ws)
	var out []store.Change
	err = t.each(prefix, prefix.u64(uint64(after)+1), nil, func(_, b []byte) (bool, error) {
		var c store.Change
		if err := decode(b, &c); err != nil {
			return false, err
		}
		out = append(out, c)
		return (limit <= 0 || len(out) < limit) && c.Seq < last, nil
	})
	return out, err
}
