package memstore

import (
	"cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// launchRow is a stored launch and its insert number.
type launchRow struct {
	l   store.Launch
	seq int64
}

func byLaunchSeq(a, b launchRow) int { return cmp.Compare(a.seq, b.seq) }

func (st *state) putLaunch(r launchRow) {
	st.deleteLaunch(r.l.ID)
	st.launches[r.l.ID] = r
	if !r.l.Gone {
		st.live[r.l.ID] = struct{}{}
		st.liveByWS.add(r.l.Workspace, r.l.ID)
	}
}

func (st *state) deleteLaunch(id baton.LaunchID) {
	cur, ok := st.launches[id]
	if !ok {
		return
	}
	delete(st.live, id)
	st.liveByWS.remove(cur.l.Workspace, id)
	delete(st.launches, id)
}

func (st *state) restoreLaunch(id baton.LaunchID) func() {
	old, ok := st.launches[id]
	if !ok {
		return func() { st.deleteLaunch(id) }
	}
	return func() { st.putLaunch(old) }
}

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	if err := t.readable(); err != nil {
		return store.Launch{}, err
	}
	r, ok := t.st.launches[id]
	if !ok {
		return store.Launch{}, notFound("launch", id)
	}
	return r.l, nil
}

// PutLaunch inserts or replaces l; a stored one keeps its creation order.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutLaunch(l store.Launch) error {
	if err := t.begin("PutLaunch", key("launch", "ID", l.ID), key("launch", "Workspace", l.Workspace)); err != nil {
		return err
	}
	cur, found := t.st.launches[l.ID]
	t.onUndo(t.st.restoreLaunch(l.ID))
	t.st.putLaunch(launchRow{l: records.Launch(l, records.UTC), seq: t.seqOf(found, cur.seq)})
	return nil
}

// LiveLaunches returns the launches not gone (live) of ws (ws == "": of
// every workspace), oldest (first inserted) first, reading only those.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	ids := t.st.live
	if ws != "" {
		ids = t.st.liveByWS[ws]
	}
	rows := collect(ids, func(id baton.LaunchID) launchRow { return t.st.launches[id] }, byLaunchSeq)
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]store.Launch, len(rows))
	for i, r := range rows {
		out[i] = r.l
	}
	return out, nil
}
