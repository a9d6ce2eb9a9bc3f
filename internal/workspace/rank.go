package workspace

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// The current session is found without reading a workspace's sessions
// from two things the workspace keeps beside its cached current session:
//
//   - the ranking list: the sessions the rule may select (order >= 0),
//     linked most current first by the rule's order without its
//     running-first step (store.Session.RankAbove and RankBelow;
//     store.Workspace.RankHead is the first);
//   - the running list: those of them whose row says running
//     (store.Workspace.Running, normally one session or none).
//
// The current session is the most current running one, else the head of
// the ranking list. An activation moves its session to the head (it holds
// the highest order); a rollback unlinks its session; an end changes
// nothing in the list for a session with an order > 0 (the order alone
// places it), and moves a row still at order 0 to its place among the
// rows at 0, reading only the rows it passes. Every change reads and
// writes a bounded number of rows, whatever the workspace's history: no
// new row is ever left at order 0 (a start activates it), and a row at 0
// moves once at most (only a running row ends, and it runs again only
// once activated).
//
// A workspace that keeps none of this (store.Workspace.Ranked false:
// written by an earlier release) is handled as before, by reading its
// sessions (refresh), which links them when that rewrites few rows; a
// longer one is linked by RankAll over several transactions.

// linked reports whether s is in ws's ranking list.
func linked(ws store.Workspace, s store.Session) bool {
	return s.RankAbove != "" || s.RankBelow != "" || ws.RankHead == s.ID
}

// load reads session id and its workspace.
func load(tx store.Tx, id baton.SessionID) (store.Session, store.Workspace, error) {
	s, err := tx.GetSession(id)
	if err != nil {
		return store.Session{}, store.Workspace{}, err
	}
	ws, err := GetWorkspace(tx, s.Workspace)
	return s, ws, err
}

// setLinks rewrites session id's links where change says, if that changes
// them.
func setLinks(tx store.Tx, id baton.SessionID, change func(*store.Session)) error {
	s, err := tx.GetSession(id)
	if err != nil {
		return err
	}
	was := s
	change(&s)
	if s.RankAbove == was.RankAbove && s.RankBelow == was.RankBelow {
		return nil
	}
	return tx.PutSession(s)
}

// unlink takes s out of the ranking list, rewriting its neighbours; s
// itself is left for the caller to write.
func unlink(tx store.Tx, ws *store.Workspace, s *store.Session) error {
	a, b := s.RankAbove, s.RankBelow
	switch {
	case a != "":
		if err := setLinks(tx, a, func(n *store.Session) { n.RankBelow = b }); err != nil {
			return err
		}
	case ws.RankHead == s.ID:
		ws.RankHead = b
	}
	if b != "" {
		if err := setLinks(tx, b, func(n *store.Session) { n.RankAbove = a }); err != nil {
			return err
		}
	}
	s.RankAbove, s.RankBelow = "", ""
	return nil
}

// insertBelow links s (not in the list) right below session above, or at
// the head when above is empty; s itself is left for the caller to write.
func insertBelow(tx store.Tx, ws *store.Workspace, s *store.Session, above baton.SessionID) error {
	var below baton.SessionID
	if above == "" {
		below, ws.RankHead = ws.RankHead, s.ID
	} else {
		a, err := tx.GetSession(above)
		if err != nil {
			return err
		}
		below = a.RankBelow
		if err := setLinks(tx, above, func(n *store.Session) { n.RankBelow = s.ID }); err != nil {
			return err
		}
	}
	if below != "" {
		if err := setLinks(tx, below, func(n *store.Session) { n.RankAbove = s.ID }); err != nil {
			return err
		}
	}
	s.RankAbove, s.RankBelow = above, below
	return nil
}

// reposition moves s, in the list, to its place after its ranking key
// changed (only a row at order 0 has a key that an end changes), and
// writes s when it moved. It reads s's neighbours, and the rows it passes
// when s moves: up while the row above ranks after s, else down while the
// row below ranks before it (the list without s is in order, so this ends
// at s's place).
func reposition(tx store.Tx, ws *store.Workspace, s store.Session) error {
	above, moved := s.RankAbove, false
	for above != "" {
		a, err := tx.GetSession(above)
		if err != nil {
			return err
		}
		if moreCurrent(s, a) >= 0 {
			break
		}
		above, moved = a.RankAbove, true
	}
	for next := s.RankBelow; !moved && next != ""; {
		n, err := tx.GetSession(next)
		if err != nil {
			return err
		}
		if moreCurrent(n, s) >= 0 {
			break
		}
		above, next = next, n.RankBelow
	}
	if !moved && above == s.RankAbove {
		return nil
	}
	if err := unlink(tx, ws, &s); err != nil {
		return err
	}
	if err := insertBelow(tx, ws, &s, above); err != nil {
		return err
	}
	return tx.PutSession(s)
}

// setRunning puts id in ws's running list or takes it out.
func setRunning(ws *store.Workspace, id baton.SessionID, running bool) {
	i := slices.Index(ws.Running, id)
	switch {
	case running && i < 0:
		ws.Running = append(slices.Clone(ws.Running), id)
	case !running && i >= 0:
		ws.Running = slices.Delete(slices.Clone(ws.Running), i, i+1)
		if len(ws.Running) == 0 {
			ws.Running = nil
		}
	}
}

// current applies the current-session rule to what ws keeps: the most
// current running session, else the head of the ranking list. It reads
// the running sessions only.
func current(tx store.Tx, ws store.Workspace) (baton.SessionID, error) {
	running, err := runningRows(tx, ws)
	if err != nil || len(running) == 0 {
		return ws.RankHead, err
	}
	return slices.MinFunc(running, moreCurrent).ID, nil
}

// runningRows reads the sessions of ws's running list that still exist.
func runningRows(tx store.Tx, ws store.Workspace) ([]store.Session, error) {
	var running []store.Session
	for _, id := range ws.Running {
		s, err := tx.GetSession(id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		running = append(running, s)
	}
	return running, nil
}

// settle sets ws's current session from what it keeps and writes it; a
// workspace that keeps none of it is refreshed instead.
func settle(tx store.Tx, ws store.Workspace, now time.Time) error {
	if !ws.Ranked {
		return refresh(tx, ws, now)
	}
	cur, err := current(tx, ws)
	if err != nil {
		return err
	}
	ws.CurrentSession, ws.UpdatedAt = cur, now
	return tx.PutWorkspace(ws)
}

// RecordEnd writes s, whose row the caller has just marked ended (from
// running, or from idle), and brings its workspace's running list,
// ranking and current session up to date, reading no other session than
// the ones those name.
func RecordEnd(tx store.Tx, s store.Session, now time.Time) error {
	if err := tx.PutSession(s); err != nil {
		return err
	}
	ws, err := GetWorkspace(tx, s.Workspace)
	if err != nil {
		return err
	}
	if !ws.Ranked {
		return refresh(tx, ws, now)
	}
	setRunning(&ws, s.ID, false)
	if s.ActivationOrder == 0 && linked(ws, s) {
		if err := reposition(tx, &ws, s); err != nil {
			return err
		}
	}
	return settle(tx, ws, now)
}

// Recompute sets the workspace's cached current session from the running
// list and ranking list the workspace keeps, without reading its sessions
// (a workspace written by an earlier release that keeps neither is
// refreshed instead, see Refresh).
// Package session keeps them through every change it makes; after
// changing session rows by hand, call Refresh instead.
func Recompute(tx store.Tx, wsID baton.WorkspaceID, now time.Time) error {
	ws, err := GetWorkspace(tx, wsID)
	if err != nil {
		return err
	}
	return settle(tx, ws, now)
}

// maxResumeWalk bounds the rows implicitResume reads down the ranking
// list before it falls back to reading every session.
const maxResumeWalk = 8

// ImplicitResume applies SelectImplicitResume to workspace ws's sessions
// for cfg. On a ranked workspace it reads the running sessions and walks
// the ranking list from its head, the first session with a native id on
// cfg's engine and account being the choice; only when none is within
// maxResumeWalk rows (the workspace has just moved to another engine or
// account) does it read every session.
func ImplicitResume(tx store.Tx, ws store.Workspace, cfg baton.EngineConfig) (store.Session, bool, error) {
	keep := func(s store.Session) bool { return s.NativeID != "" && s.Config.SameAccount(cfg) }
	if ws.Ranked {
		running, err := runningRows(tx, ws)
		if err != nil {
			return store.Session{}, false, err
		}
		if s, ok := selectBest(running, keep); ok {
			return s, true, nil
		}
		id := ws.RankHead
		for i := 0; id != "" && i < maxResumeWalk; i++ {
			s, err := tx.GetSession(id)
			if err != nil {
				return store.Session{}, false, err
			}
			if keep(s) {
				return s, true, nil
			}
			id = s.RankBelow
		}
		if id == "" {
			return store.Session{}, false, nil
		}
	}
	all, err := tx.ListSessions(ws.ID)
	if err != nil {
		return store.Session{}, false, err
	}
	s, ok := SelectImplicitResume(all, cfg)
	return s, ok, nil
}

// rankChunk is how many rank links one transaction of RankAll writes.
const rankChunk = 500

// RankAll links the sessions of every workspace of st that keeps no
// ranking yet (too long to link inside the transaction that found it
// unranked), rankChunk rows per transaction, the last of which reads every
// row again and marks the workspace ranked. Until then the workspace works
// as before, its current session found by reading its sessions.
func RankAll(ctx context.Context, st store.Store, now func() time.Time) error {
	var unranked []baton.WorkspaceID
	err := st.View(ctx, func(tx store.Tx) error {
		wss, err := tx.ListWorkspaces()
		for _, ws := range wss {
			if !ws.Ranked {
				unranked = append(unranked, ws.ID)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, id := range unranked {
		for done := false; !done; {
			err := st.Update(ctx, func(tx store.Tx) error {
				done = false
				ws, err := tx.GetWorkspace(id)
				if err != nil || ws.Ranked {
					done = true
					return err
				}
				sessions, err := tx.ListSessions(id)
				if err != nil {
					return err
				}
				p := planRanking(ws, sessions)
				for i, r := range p.relink {
					if i == rankChunk {
						return nil
					}
					if err := tx.PutSession(r); err != nil {
						return err
					}
				}
				done = true
				return tx.PutWorkspace(p.apply(ws, true, now()))
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
