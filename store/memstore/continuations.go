package memstore

import (
	"maps"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// GetContinuation returns the continuation id; store.ErrNotFound if absent.
func (t *tx) GetContinuation(id baton.ContinuationID) (store.Continuation, error) {
	return get(t, t.st.continuations, "continuation", id)
}

// PutContinuation inserts or replaces c; a stored one keeps its creation
// order. baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutContinuation(c store.Continuation) error {
	if err := t.begin("PutContinuation", backend.Required(pkg, "continuation", "ID", c.ID), backend.Required(pkg, "continuation", "Workspace", c.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.continuations, c.ID, records.Continuation(c, records.UTC), insertSeq(t, t.st.continuations, c.ID))
	return nil
}

// QueuedContinuations returns the continuations in state queued, oldest
// (first inserted) first, reading only those.
func (t *tx) QueuedContinuations() ([]store.Continuation, error) {
	return list(t, t.st.continuations, maps.Keys(t.st.queued), bySeq)
}

// ListContinuations returns the continuations of ws, any state, oldest
// first.
func (t *tx) ListContinuations(ws baton.WorkspaceID) ([]store.Continuation, error) {
	return list(t, t.st.continuations, maps.Keys(t.st.contsByWS[ws]), bySeq)
}
