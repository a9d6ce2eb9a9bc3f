package memstore

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// wakeupKey is a wakeup's place in (At, ID) order.
type wakeupKey struct {
	at time.Time
	id baton.WakeupID
}

func compareWakeupKeys(a, b wakeupKey) int {
	return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.id, b.id))
}

func byAtID(a, b row[store.Wakeup]) int {
	return compareWakeupKeys(wakeupKey{a.r.At, a.r.ID}, wakeupKey{b.r.At, b.r.ID})
}

func (s *state) indexWakeup(w store.Wakeup, in bool) {
	s.wakeupsByWS.set(w.Workspace, w.ID, in)
	if w.Session != "" {
		s.wakeupsBySession.set(w.Session, w.ID, in)
	}
	if w.Status != store.WakeupPending {
		return
	}
	k := wakeupKey{w.At, w.ID}
	switch i, found := slices.BinarySearchFunc(s.due, k, compareWakeupKeys); {
	case in:
		s.due = slices.Insert(s.due, i, k)
	case found:
		s.due = slices.Delete(s.due, i, i+1)
	}
}

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	return get(t, t.st.wakeups, "wakeup", id)
}

// PutWakeup inserts or replaces w; baton.ErrInvalid if ID or Workspace is
// empty.
func (t *tx) PutWakeup(w store.Wakeup) error {
	if err := t.begin("PutWakeup", backend.Required(pkg, "wakeup", "ID", w.ID), backend.Required(pkg, "wakeup", "Workspace", w.Workspace)); err != nil {
		return err
	}
	write(t, &t.st.wakeups, w.ID, records.Wakeup(w, records.UTC), 0)
	return nil
}

// ListWakeups returns the wakeups of ws, any status, ordered by (At, ID);
// with pinned != "" only those pinned to it, from the session's index.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if pinned == "" {
		return list(t, t.st.wakeups, maps.Keys(t.st.wakeupsByWS[ws]), byAtID)
	}
	out, err := list(t, t.st.wakeups, maps.Keys(t.st.wakeupsBySession[pinned]), byAtID)
	return slices.DeleteFunc(out, func(w store.Wakeup) bool { return w.Workspace != ws }), err
}

// DueWakeups returns the pending wakeups with At <= now ordered by (At, ID),
// at most limit of them (limit <= 0: all). It reads only what it returns.
func (t *tx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var out []store.Wakeup
	for _, k := range t.st.due {
		if k.at.After(now) || (limit > 0 && len(out) == limit) {
			break
		}
		out = append(out, t.st.wakeups[k.id].r)
	}
	return out, nil
}
