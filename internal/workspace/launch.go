package workspace

import (
	"errors"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/store"
)

// NewLaunchID mints a launch id.
func NewLaunchID() baton.LaunchID { return baton.LaunchID(ids.New("lch")) }

// RecordLaunch inserts the record of a launch about to be made, inside the
// transaction that permits it, so that it is durable before the spawn: after
// a crash, every launch that may still run is known (store.Tx.LiveLaunches)
// and can be reaped (engine.Reaper) before its workspace is released. l.ID
// must be minted (NewLaunchID) and passed to the engine as
// engine.StartRequest.LaunchID; a record not Gone is live.
func RecordLaunch(tx store.Tx, l store.Launch) error {
	if l.ID == "" || l.Workspace == "" {
		return baton.Errorf(baton.ErrInvalid, "launch record needs an id and a workspace")
	}
	return tx.PutLaunch(l)
}

// RecordActual sets, on row s, what a launch of it reported it really runs
// (its process's Actual): the fields it reported replace the
// row's, the others are kept (a CLI that says nothing this time keeps
// what an earlier launch said). It reports whether the row changed.
func RecordActual(s *store.Session, a engine.Actual) bool {
	changed := false
	if a.Model != "" && a.Model != s.ActualModel {
		s.ActualModel, changed = a.Model, true
	}
	if a.Version != "" && a.Version != s.EngineVersion {
		s.EngineVersion, changed = a.Version, true
	}
	return changed
}

// LaunchGone marks launch id gone inside tx, once.
func LaunchGone(tx store.Tx, id baton.LaunchID, reason string, now time.Time) error {
	l, ok, err := getLaunch(tx, id)
	if !ok || l.Gone {
		return err
	}
	l.Gone, l.EndReason, l.UpdatedAt = true, reason, now
	return tx.PutLaunch(l)
}

// getLaunch reads the record of launch id; ok is false when it has none.
func getLaunch(tx store.Tx, id baton.LaunchID) (l store.Launch, ok bool, err error) {
	if id == "" {
		return l, false, nil
	}
	l, err = tx.GetLaunch(id)
	if errors.Is(err, store.ErrNotFound) {
		return l, false, nil
	}
	return l, err == nil, err
}

// RelaunchedSince reports, inside tx, whether session sid has a live
// launch other than launch id made no earlier than it: the row then runs
// for that launch, and the end of launch id (recorded late, by a node
// that was paused or whose process another node reaped) is no longer the
// row's end. A launch with no record has none.
func RelaunchedSince(tx store.Tx, sid baton.SessionID, id baton.LaunchID) (bool, error) {
	l, ok, err := getLaunch(tx, id)
	if !ok {
		return false, err
	}
	return liveOther(tx, l.Workspace, sid, id, l.CreatedAt)
}

// liveOther reports whether session sid of workspace ws has a live launch
// other than id made no earlier than since.
func liveOther(tx store.Tx, ws baton.WorkspaceID, sid baton.SessionID, id baton.LaunchID, since time.Time) (bool, error) {
	live, err := tx.LiveLaunches(ws)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(live, func(o store.Launch) bool {
		return o.Session == sid && o.ID != id && !o.CreatedAt.Before(since)
	}), nil
}

// EndReaped ends, inside tx, the row of reaped launch l's session when it
// still says it runs and no other launch of it is live: its process is
// confirmed gone, and a row left running would stay the workspace's
// current session (a running session always is) after a transfer moved on.
func EndReaped(tx store.Tx, l store.Launch, reason string, now time.Time) (bool, error) {
	sess, err := tx.GetSession(l.Session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case sess.Status != store.SessionRunning:
		return false, nil
	}
	if again, err := liveOther(tx, l.Workspace, l.Session, l.ID, time.Time{}); err != nil || again {
		return false, err
	}
	sess.Status, sess.EndedAt, sess.EndReason = store.SessionEnded, now, reason
	return true, RecordEnd(tx, sess, now)
}

// RebindWakeups moves every pending wakeup of workspace ws pinned to from
// onto to, keeping prompt and deadline. The transfer coordinator calls it
// only in the transaction that completes a transfer; a failed or cancelled
// transfer moves nothing. It returns how many moved.
func RebindWakeups(tx store.Tx, ws baton.WorkspaceID, from, to baton.SessionID, now time.Time) (int, error) {
	if from == "" || from == to {
		return 0, nil
	}
	pinned, err := tx.ListWakeups(ws, from)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, w := range pinned {
		if w.Status != store.WakeupPending {
			continue
		}
		w.Session, w.UpdatedAt = to, now
		if err := tx.PutWakeup(w); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
