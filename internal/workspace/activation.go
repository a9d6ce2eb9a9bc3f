package workspace

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// RolledBack is the activation order of a rolled-back session: excluded from
// default selection and implicit resume, kept in history.
const RolledBack = -1

// lastActive is the legacy recency of a session still at order 0.
func lastActive(s store.Session) time.Time {
	if s.EndedAt.After(s.StartedAt) {
		return s.EndedAt
	}
	return s.StartedAt
}

// moreCurrent orders sessions by the current-session rule, most current
// first: activation order, then (for legacy rows at 0) max(startedAt,
// endedAt), then startedAt, then creation order.
func moreCurrent(a, b store.Session) int {
	if c := cmp.Compare(b.ActivationOrder, a.ActivationOrder); c != 0 {
		return c
	}
	if c := lastActive(b).Compare(lastActive(a)); c != 0 {
		return c
	}
	if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
		return c
	}
	return cmp.Compare(b.Seq, a.Seq)
}

// SelectCurrent applies the current-session rule to a workspace's sessions:
// a running session first; else the highest activation order >= 0, rows
// still at 0 falling back to max(startedAt, endedAt), then startedAt.
// Rolled-back sessions (order < 0) are never selected. ok is false when no
// session qualifies.
func SelectCurrent(sessions []store.Session) (cur store.Session, ok bool) {
	return selectBest(sessions, func(store.Session) bool { return true })
}

// SelectImplicitResume is the current-session rule restricted to sessions on
// the same engine and account as cfg that have a native id: the session an
// ordinary message resumes without being told which.
func SelectImplicitResume(sessions []store.Session, cfg baton.EngineConfig) (store.Session, bool) {
	return selectBest(sessions, func(s store.Session) bool {
		return s.NativeID != "" && s.Config.SameAccount(cfg)
	})
}

func selectBest(sessions []store.Session, keep func(store.Session) bool) (store.Session, bool) {
	var best store.Session
	found, bestRunning := false, false
	for _, s := range sessions {
		if s.ActivationOrder < 0 || !keep(s) {
			continue
		}
		running := s.Status == store.SessionRunning
		switch {
		case !found, running && !bestRunning:
		case running == bestRunning && moreCurrent(s, best) < 0:
		default:
			continue
		}
		best, found, bestRunning = s, true, running
	}
	return best, found
}

// Activate gives session id the next activation order of its workspace
// (max+1) and refreshes the workspace's current session. Every start,
// resume and restoration calls it inside the transaction that records it.
// A session that already holds the highest order keeps it.
//
// Its cost does not grow with the workspace's sessions: the activated
// session moves to the head of the workspace's ranking list (it holds the
// highest order), which rewrites at most its old and new neighbours, and
// the current session is read from the running list and that head.
func Activate(tx store.Tx, id baton.SessionID, now time.Time) (store.Session, error) {
	s, ws, err := load(tx, id)
	if err != nil {
		return store.Session{}, err
	}
	top := s.ActivationOrder > 0 && s.ActivationOrder == ws.ActivationCounter
	if !ws.Ranked {
		return s, activateUnranked(tx, ws, s, top, now)
	}
	if !top || ws.RankHead != s.ID {
		if linked(ws, s) {
			if err := unlink(tx, &ws, &s); err != nil {
				return store.Session{}, err
			}
		}
		if !top {
			ws.ActivationCounter++
			s.ActivationOrder = ws.ActivationCounter
		}
		if err := insertBelow(tx, &ws, &s, ""); err != nil {
			return store.Session{}, err
		}
		if err := tx.PutSession(s); err != nil {
			return store.Session{}, err
		}
	}
	setRunning(&ws, s.ID, s.Status == store.SessionRunning)
	return s, settle(tx, ws, now)
}

// activateUnranked is Activate in a workspace that keeps no ranking (see
// refresh): the activated session holds the highest order, so it is the
// current session unless another session runs (the cached current session
// says whether one does: a running session is always the current one);
// only then are the sessions read.
func activateUnranked(tx store.Tx, ws store.Workspace, s store.Session, top bool, now time.Time) error {
	if !top {
		ws.ActivationCounter++
		s.ActivationOrder = ws.ActivationCounter
		if err := tx.PutSession(s); err != nil {
			return err
		}
	}
	if s.Status != store.SessionRunning && ws.CurrentSession != "" && ws.CurrentSession != s.ID {
		prev, err := tx.GetSession(ws.CurrentSession)
		switch {
		case err == nil && prev.Status == store.SessionRunning:
			return refresh(tx, ws, now)
		case err != nil && !errors.Is(err, store.ErrNotFound):
			return err
		}
	}
	ws.CurrentSession, ws.UpdatedAt = s.ID, now
	return tx.PutWorkspace(ws)
}

// Rollback marks session id rolled back (order -1), and ended with reason
// if its row did not say so already, and refreshes the workspace's current
// session. With no other eligible session the workspace is left with none,
// so the next ordinary message starts fresh. The transfer coordinator calls
// it for a target whose attempt did not complete. Like Activate, its cost
// does not grow with the workspace's sessions.
func Rollback(tx store.Tx, id baton.SessionID, reason string, now time.Time) error {
	s, ws, err := load(tx, id)
	if err != nil {
		return err
	}
	if ws.Ranked && linked(ws, s) {
		if err := unlink(tx, &ws, &s); err != nil {
			return err
		}
	}
	setRunning(&ws, s.ID, false)
	s.ActivationOrder = RolledBack
	if s.Status != store.SessionEnded {
		s.Status, s.EndedAt, s.EndReason = store.SessionEnded, now, reason
	}
	if err := tx.PutSession(s); err != nil {
		return err
	}
	return settle(tx, ws, now)
}

// Refresh recomputes the workspace's cached current session from its
// sessions, and re-derives from them what the workspace keeps to find it
// without a scan (its running list and ranking list, with the sessions'
// rank links). It reads every session of the workspace: package session
// keeps all of it through the changes it makes (see Recompute); call
// Refresh after changing session rows by hand. When that would rewrite
// the links of more than a few hundred rows in one transaction, it marks
// the workspace unranked instead (store.Workspace.Ranked): its current
// session is then found by reading its sessions, as before, until
// RankAll (run by handoff.Coordinator.Recover) links them.
func Refresh(tx store.Tx, wsID baton.WorkspaceID, now time.Time) error {
	ws, err := GetWorkspace(tx, wsID)
	if err != nil {
		return err
	}
	return refresh(tx, ws, now)
}

// maxInlineLinks bounds the rank links a refresh rewrites inside its
// caller's transaction: a workspace that needs more (one written by an
// earlier release with a long history) is left unranked, its current
// session found by reading its sessions as before, until RankAll
// links it over several transactions (a backend bounds the size of one).
const maxInlineLinks = 256

func refresh(tx store.Tx, ws store.Workspace, now time.Time) error {
	sessions, err := tx.ListSessions(ws.ID)
	if err != nil {
		return err
	}
	p := planRanking(ws, sessions)
	ranked := len(p.relink) <= maxInlineLinks
	for i := 0; ranked && i < len(p.relink); i++ {
		if err := tx.PutSession(p.relink[i]); err != nil {
			return err
		}
	}
	return tx.PutWorkspace(p.apply(ws, ranked, now))
}

// ranking is what a workspace's sessions say it keeps.
type ranking struct {
	relink  []store.Session // rows whose rank links differ, with the right ones
	running []baton.SessionID
	head    baton.SessionID
	current baton.SessionID
	counter int64
}

// apply returns ws keeping p: its ranking too when ranked, else none.
func (p ranking) apply(ws store.Workspace, ranked bool, now time.Time) store.Workspace {
	ws.Running, ws.RankHead, ws.Ranked = nil, "", ranked
	if ranked {
		ws.Running, ws.RankHead = p.running, p.head
	}
	ws.ActivationCounter, ws.CurrentSession, ws.UpdatedAt = p.counter, p.current, now
	return ws
}

// planRanking derives from a workspace's sessions (all of them) its
// current session, running list and ranking list.
func planRanking(ws store.Workspace, sessions []store.Session) ranking {
	p := ranking{counter: ws.ActivationCounter}
	var eligible []store.Session
	for _, s := range sessions {
		p.counter = max(p.counter, s.ActivationOrder)
		if s.ActivationOrder < 0 {
			continue
		}
		eligible = append(eligible, s)
		if s.Status == store.SessionRunning {
			p.running = append(p.running, s.ID)
		}
	}
	slices.SortStableFunc(eligible, moreCurrent)
	type links struct{ above, below baton.SessionID }
	want := make(map[baton.SessionID]links, len(eligible))
	for i, s := range eligible {
		var l links
		if i > 0 {
			l.above = eligible[i-1].ID
		}
		if i+1 < len(eligible) {
			l.below = eligible[i+1].ID
		}
		want[s.ID] = l
	}
	for _, s := range sessions {
		l := want[s.ID]
		if s.RankAbove != l.above || s.RankBelow != l.below {
			s.RankAbove, s.RankBelow = l.above, l.below
			p.relink = append(p.relink, s)
		}
	}
	if len(eligible) > 0 {
		p.head = eligible[0].ID
	}
	cur, _ := SelectCurrent(sessions)
	p.current = cur.ID
	return p
}

// Current returns the workspace's current session without a scan.
// ErrNoSession when it has none.
func Current(tx store.Tx, wsID baton.WorkspaceID) (store.Session, error) {
	ws, err := GetWorkspace(tx, wsID)
	if err != nil {
		return store.Session{}, err
	}
	if ws.CurrentSession == "" {
		return store.Session{}, ErrNoSession
	}
	s, err := tx.GetSession(ws.CurrentSession)
	if errors.Is(err, store.ErrNotFound) {
		return store.Session{}, baton.Errorf(ErrNoSession, "current session %s vanished", ws.CurrentSession)
	}
	return s, err
}

// SortByCurrent returns sessions ordered most current first (a copy).
func SortByCurrent(sessions []store.Session) []store.Session {
	out := slices.Clone(sessions)
	slices.SortStableFunc(out, moreCurrent)
	return out
}
