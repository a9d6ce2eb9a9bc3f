package badgerstore

import (
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
)

// dueList holds the pending wakeups of every workspace by (At, ID).
var dueList = globalList(tDue)

// wakeupIndexes are the entries of w: in its session's list (if pinned),
// in its workspace's list, and in the due list while pending; each ordered
// by (At, ID).
func wakeupIndexes(w wakeupRow) []index {
	id := string(w.ID)
	byWS := ownedList(tWakeupsByWS, string(w.Workspace))
	out := []index{{byWS, byWS.prefix().time(w.At).str(id), id}}
	if w.Session != "" {
		bySession := ownedList(tWakeupsBySession, string(w.Session))
		out = append(out, index{bySession, bySession.prefix().time(w.At).str(id), id})
	}
	if w.Status == store.WakeupPending {
		out = append(out, index{dueList, dueList.prefix().time(w.At).str(id), id})
	}
	return out
}

// GetWakeup returns the wakeup id; store.ErrNotFound if absent.
func (t *tx) GetWakeup(id baton.WakeupID) (store.Wakeup, error) {
	return getRecord[wakeupRow](t, recordKey(tWakeup, id), "wakeup", id)
}

// PutWakeup inserts or replaces w, moving its index entries when its
// session, At or status change; baton.ErrInvalid if ID or Workspace is
// empty.
func (t *tx) PutWakeup(w store.Wakeup) error {
	k := recordKey(tWakeup, w.ID)
	cur, found, err := current[wakeupRow](t, "PutWakeup", k, backend.Required(pkg, "wakeup", "ID", w.ID), backend.Required(pkg, "wakeup", "Workspace", w.Workspace))
	if err != nil {
		return err
	}
	return putRecord(t, k, toWakeup(w), cur, found, 0, "", 0, wakeupIndexes, "")
}

// ListWakeups returns the wakeups of ws, any status, ordered by (At, ID);
// with pinned != "" only those pinned to it, from the session's list.
func (t *tx) ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]store.Wakeup, error) {
	if pinned == "" {
		return listed(t, ownedList(tWakeupsByWS, string(ws)), nil, 0, tWakeup, wakeupRow.record)
	}
	out, err := listed(t, ownedList(tWakeupsBySession, string(pinned)), nil, 0, tWakeup, wakeupRow.record)
	return slices.DeleteFunc(out, func(w store.Wakeup) bool { return w.Workspace != ws }), err
}

// DueWakeups returns the pending wakeups with At <= now ordered by (At, ID),
// at most limit of them (limit <= 0: all). It reads the due list up to the
// first entry after now, and nothing else.
func (t *tx) DueWakeups(now time.Time, limit int) ([]store.Wakeup, error) {
	return listed(t, dueList, dueList.prefix().time(now), limit, tWakeup, wakeupRow.record)
}
