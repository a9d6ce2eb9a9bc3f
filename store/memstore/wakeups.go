package memstore

import (
	"cmp"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/records"
)

// wakeupKey is a wakeup's place in (At, ID) order.
type wakeupKey struct {
	at time.Time
	id baton.WakeupID
}

func compareWakeupKeys(a, b wakeupKey) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

func byAtID(a, b store.Wakeup) int {
	return compareWakeupKeys(wakeupKey{a.At, a.ID}, wakeupKey{b.At, b.ID})
}

func (st *state) putWakeup(w store.Wakeup) {
	st.deleteWakeup(w.ID)
	st.wakeups[w.ID] = w
	st.wakeupsByWS.add(w.Workspace, w.ID)
	if w.Session != "" {
		st.wakeupsBySession.add(w.Session, w.ID)
	}
	if w.Status == store.WakeupPending {
		k := wakeupKey{w.At, w.ID}
		i, _ := slices.BinarySearchFunc(st.due, k, compareWakeupKeys)
		st.due = slices.Insert(st.due, i, k)
	}
}

func (st *state) deleteWakeup(id baton.WakeupID) {
	cur, ok := st.wakeups[id]
	if !ok {
		return
	}
	st.wakeupsByWS.remove(cur.Workspace, id)
	if cur.Session != "" {
		st.wakeupsBySession.remove(cur.Session, id)
	}
	if cur.Status == store.WakeupPending {
		if i, found := slices.BinarySearchFunc(st.due, wakeupKey{cur.At, id}, compareWakeupKeys); found {
			st.due = slices.Delete(st.due, i, i+1)
		}
	}
	delete(st.wakeups, id)
}

func (st *state) restoreWakeup(id baton.WakeupID) func() {
	old, ok := st.wakeups[id]
	if !ok {
		return func() { st.deleteWakeup(id) }
	}
	return func() { st.putWakeup(old) }
}

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	if err := t.readable(); err != nil {
		return store.Wakeup{}, err
	}
	w, ok := t.st.wakeups[id]
	if !ok {
		return store.Wakeup{}, notFound("wakeup", id)
	}
	return w, nil
}

// PutWakeup inserts or replaces w; baton.ErrInvalid if ID or Workspace is
// empty.
func (t *tx) PutWakeup(w store.Wakeup) error {
	if err := t.begin("PutWakeup", key("wakeup", "ID", w.ID), key("wakeup", "Workspace", w.Workspace)); err != nil {
		return err
	}
	t.onUndo(t.st.restoreWakeup(w.ID))
	t.st.putWakeup(records.Wakeup(w, records.UTC))
	return nil
}

// ListWakeups returns the wakeups of ws, any status, ordered by (At, ID);
// with pinned != "" only those pinned to it, from the session's index.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	if pinned == "" {
		return collect(t.st.wakeupsByWS[ws], t.wakeup, byAtID), nil
	}
	out := collect(t.st.wakeupsBySession[pinned], t.wakeup, byAtID)
	return slices.DeleteFunc(out, func(w store.Wakeup) bool { return w.Workspace != ws }), nil
}

func (t *tx) wakeup(id baton.WakeupID) store.Wakeup { return t.st.wakeups[id] }

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
		out = append(out, t.st.wakeups[k.id])
	}
	return out, nil
}
