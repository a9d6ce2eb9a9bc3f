package memstore

import (
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// commit numbers the transaction's changes after the committed ones of
// their workspaces, appends them to the feed and returns the workspaces
// that grew.
func (t *tx) commit() []baton.WorkspaceID {
	if t.st.feed == nil {
		t.st.feed = map[baton.WorkspaceID][]store.Change{}
	}
	var grown []baton.WorkspaceID
	for c := range t.changes.All() {
		l := t.st.feed[c.Workspace]
		if !slices.Contains(grown, c.Workspace) {
			grown = append(grown, c.Workspace)
		}
		c.Seq = int64(len(l)) + 1
		t.st.feed[c.Workspace] = append(l, c)
	}
	return grown
}

// outChange copies a stored change for the caller.
func outChange(c store.Change) store.Change {
	c.Handoff, c.Session, c.Instruction = cloned(c.Handoff), cloned(c.Session), cloned(c.Instruction)
	return c
}

// cloned returns a pointer to a clone of *p, nil if p is.
func cloned[R any](p *R) *R {
	if p == nil {
		return nil
	}
	r := clone(*p)
	return &r
}

// Changes returns the committed changes of ws with Seq > after, ascending,
// at most limit (limit <= 0: all). Inside an Update, the transaction's own
// changes are not listed: they are numbered when it commits.
func (t *tx) Changes(ws baton.WorkspaceID, after int64, limit int) ([]store.Change, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	l := t.st.feed[ws]
	l = l[min(max(after, 0), int64(len(l))):] // Seq n is at index n-1
	if limit > 0 {
		l = l[:min(limit, len(l))]
	}
	var out []store.Change
	for _, c := range l {
		out = append(out, outChange(c))
	}
	return out, nil
}

// LastSeq returns the highest committed change Seq of ws (0 when none).
func (t *tx) LastSeq(ws baton.WorkspaceID) (int64, error) {
	if err := t.readable(); err != nil {
		return 0, err
	}
	return int64(len(t.st.feed[ws])), nil
}

// Subscribe returns a channel that receives a value after each commit that
// appends changes to ws (ws == "": to any workspace). Notifications are
// coalesced: the channel holds at most one, and a committer never waits
// for a reader. Closing the Store wakes every subscriber once (what it
// reads next is store.ErrClosed). cancel ends the subscription; it is
// idempotent and never closes ch.
func (s *Store) Subscribe(ws baton.WorkspaceID) (ch <-chan struct{}, cancel func()) {
	return s.subs.Subscribe(ws)
}
