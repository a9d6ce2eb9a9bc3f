package memstore

import (
	"cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// continuationRow is a stored continuation and its insert number.
type continuationRow struct {
	c   store.Continuation
	seq int64
}

func byContinuationSeq(a, b continuationRow) int { return cmp.Compare(a.seq, b.seq) }

func (st *state) putContinuation(r continuationRow) {
	st.deleteContinuation(r.c.ID)
	st.continuations[r.c.ID] = r
	st.contsByWS.add(r.c.Workspace, r.c.ID)
	if r.c.State == store.ContinuationQueued {
		st.queued[r.c.ID] = struct{}{}
	}
}

func (st *state) deleteContinuation(id baton.ContinuationID) {
	cur, ok := st.continuations[id]
	if !ok {
		return
	}
	st.contsByWS.remove(cur.c.Workspace, id)
	delete(st.queued, id)
	delete(st.continuations, id)
}

func (st *state) restoreContinuation(id baton.ContinuationID) func() {
	old, ok := st.continuations[id]
	if !ok {
		return func() { st.deleteContinuation(id) }
	}
	return func() { st.putContinuation(old) }
}

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	if err := t.readable(); err != nil {
		return store.Continuation{}, err
	}
	r, ok := t.st.continuations[id]
	if !ok {
		return store.Continuation{}, notFound("continuation", id)
	}
	return r.c, nil
}

// PutContinuation inserts or replaces c; a stored one keeps its creation
// order. baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutContinuation(c store.Continuation) error {
	if err := t.begin("PutContinuation", key("continuation", "ID", c.ID), key("continuation", "Workspace", c.Workspace)); err != nil {
		return err
	}
	cur, found := t.st.continuations[c.ID]
	t.onUndo(t.st.restoreContinuation(c.ID))
	t.st.putContinuation(continuationRow{c: records.Continuation(c, records.UTC), seq: t.seqOf(found, cur.seq)})
	return nil
}

// QueuedContinuations returns the continuations in state queued, oldest
// (first inserted) first, reading only those.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	return continuationsOf(collect(t.st.queued, t.continuationRow, byContinuationSeq)), nil
}

// ListContinuations returns the continuations of ws, any state, oldest
// first.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	return continuationsOf(collect(t.st.contsByWS[ws], t.continuationRow, byContinuationSeq)), nil
}

func (t *tx) continuationRow(id baton.ContinuationID) continuationRow { return t.st.continuations[id] }

func continuationsOf(rows []continuationRow) []store.Continuation {
	if len(rows) == 0 {
		return nil
	}
	out := make([]store.Continuation, len(rows))
	for i, r := range rows {
		out[i] = r.c
	}
	return out
}
