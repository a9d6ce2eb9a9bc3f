package memstore

import (
	"maps"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

func (s *state) indexLaunch(l store.Launch, in bool) {
	live := in && !l.Gone
	s.live.set(l.ID, live)
	s.liveByWS.set(l.Workspace, l.ID, live)
}

// GetLaunch returns the launch id; store.ErrNotFound if absent.
func (t *tx) GetLaunch(id baton.LaunchID) (store.Launch, error) {
	return get(t, t.st.launches, "launch", id)
}

// PutLaunch inserts or replaces l; a stored one keeps its creation order.
// baton.ErrInvalid if ID or Workspace is empty.
func (t *tx) PutLaunch(l store.Launch) error {
	if err := t.begin("PutLaunch", backend.Required(pkg, "launch", "ID", l.ID), backend.Required(pkg, "launch", "Workspace", l.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.launches, l.ID, records.Launch(l, records.UTC), insertSeq(t, t.st.launches, l.ID))
	return nil
}

// LiveLaunches returns the launches not gone (live) of ws (ws == "": of
// every workspace), oldest (first inserted) first, reading only those.
func (t *tx) LiveLaunches(ws baton.WorkspaceID) ([]store.Launch, error) {
	ids := t.st.live
	if ws != "" {
		ids = t.st.liveByWS[ws]
	}
	return list(t, t.st.launches, maps.Keys(ids), bySeq)
}
