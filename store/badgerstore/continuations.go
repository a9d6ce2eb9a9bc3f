package badgerstore

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// queuedList holds the queued continuations of every workspace, oldest
// first: by CreatedAt, then workspace and insert number.
var queuedList = globalList(tQueued)

// continuationIndexes are the entries of c: in its workspace's list by
// insert number, and in the queue while queued. A continuation that leaves
// the queue and comes back gets its old place (the key is the same).
func continuationIndexes(c continuationRow) []index {
	out := []index{seqIndex(tContsByWS, c.Workspace, c.Seq, c.ID)}
	if c.State == store.ContinuationQueued {
		id := string(c.ID)
		out = append(out, index{queuedList, queuedList.prefix().time(c.CreatedAt).str(string(c.Workspace)).u64(c.Seq).str(id), id})
	}
	return out
}

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	return getRecord[continuationRow](t, recordKey(tContinuation, id), "continuation", id)
}

// PutContinuation inserts or replaces c; a stored one keeps its insert
// number (its place in ListContinuations and in the queue).
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutContinuation(c store.Continuation) error {
	k := recordKey(tContinuation, c.ID)
	cur, found, seq, err := currentSeq[continuationRow](t, "PutContinuation", k, tContsByWS, c.Workspace, backend.Required(pkg, "continuation", "ID", c.ID), backend.Required(pkg, "continuation", "Workspace", c.Workspace))
	if err != nil {
		return err
	}
	return putRecord(t, k, toContinuation(c, seq), cur, found, tContsByWS, c.Workspace, seq, continuationIndexes, "")
}

// QueuedContinuations returns the continuations in state queued, oldest
// (CreatedAt, then workspace and insert order) first, reading only those.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	return listed(t, queuedList, nil, 0, tContinuation, continuationRow.record)
}

// ListContinuations returns the continuations of ws, any state, in insert
// order.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	return listed(t, ownedList(tContsByWS, string(ws)), nil, 0, tContinuation, continuationRow.record)
}
