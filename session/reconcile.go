package session

import (
	"context"

	"github.com/batonhq/baton"

	"github.com/batonhq/baton/store"
)

// Reconcile is run once at start, by the only process serving the store.
// First it reaps every launch an earlier process left live (Reap: the
// engine finds its processes, even orphans of a crashed host, stops them
// and confirms them gone). Then every session row still marked running
// whose process this Service did not launch is marked ended ("interrupted
// by a restart"), except a row whose launch could not be confirmed gone:
// it stays running, and ordinary starts in its workspace are refused
// (ErrSessionRunning) until a later Reconcile or Reap confirms it. Each
// workspace's current session is refreshed. Without it a crash leaves rows
// running forever, and the current-session rule prefers running rows.
// Last, a workspace that keeps no ranking of its sessions yet (written by
// an earlier release with a long history) gets it, over several
// transactions, so that its ends and rollbacks stop reading its sessions
// (see Refresh). It launches nothing and returns how many rows it ended.
// Errors: the store's; safe to run again.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	reaped, err := s.reap(ctx, "", nil, "interrupted by a restart")
	if err != nil {
		return 0, err
	}
	held := map[baton.SessionID]bool{}
	for _, l := range reaped.Unconfirmed {
		held[l.Session] = true
	}
	n := 0
	err = s.store.Update(ctx, func(tx store.Tx) error {
		n = len(reaped.Ended)
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		now := s.clock.Now()
		for _, ws := range wss {
			sessions, err := tx.ListSessions(ws.ID)
			if err != nil {
				return err
			}
			changed := false
			for _, sess := range sessions {
				if sess.Status != store.SessionRunning {
					continue
				}
				if id, ok := s.Running(ws.ID); (ok && id == sess.ID) || held[sess.ID] {
					continue
				}
				sess.Status, sess.EndedAt, sess.EndReason = store.SessionEnded, now, "interrupted by a restart"
				if err := tx.PutSession(sess); err != nil {
					return err
				}
				n, changed = n+1, true
			}
			if changed {
				if err := Refresh(tx, ws.ID, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return n, err
	}
	return n, s.rankAll(ctx)
}

// deriveChunk is how many rank links one transaction of rankAll writes.
const deriveChunk = 500

// rankAll links the sessions of every workspace that keeps no ranking yet
// (written by an earlier release, or too long to link inside the
// transaction that found it unranked), deriveChunk rows per transaction,
// the last of which reads every row again and marks the workspace ranked.
// Until then the workspace works as before, its current session found by
// reading its sessions.
func (s *Service) rankAll(ctx context.Context) error {
	var unranked []baton.WorkspaceID
	err := s.store.View(ctx, func(tx store.Tx) error {
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
			err := s.store.Update(ctx, func(tx store.Tx) error {
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
					if i == deriveChunk {
						return nil
					}
					if err := tx.PutSession(r); err != nil {
						return err
					}
				}
				done = true
				ws.Running, ws.RankHead, ws.Ranked = p.running, p.head, true
				ws.ActivationCounter, ws.CurrentSession, ws.UpdatedAt = p.counter, p.current, s.clock.Now()
				return tx.PutWorkspace(ws)
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}
