package session

import (
	"context"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
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
// workspace's current session is refreshed, in a transaction per
// workspace. Without it a crash leaves rows
// running forever, and the current-session rule prefers running rows.
// Last, a workspace that keeps no ranking of its sessions yet (written by
// an earlier release with a long history) gets it, over several
// transactions, so that its ends and rollbacks stop reading its sessions
// (see Refresh). It launches nothing and returns what it reaped (each
// launch is logged, see Reap) and how many rows it ended, those of the
// reaped launches included. Errors: the
// store's; safe to run again.
func (p *supervisor) Reconcile(ctx context.Context) (workspace.ReapResult, int, error) {
	s := p.svc()
	reaped, err := s.reap(ctx, "", nil, "interrupted by a restart")
	if err != nil {
		return reaped, 0, err
	}
	held := map[baton.SessionID]bool{}
	for _, l := range reaped.Unconfirmed {
		held[l.Session] = true
	}
	// One Update per workspace: on a store that locks by workspace
	// (store/pgstore) each waits only for that workspace's Updates, and
	// a long list of workspaces makes no long transaction.
	var wss []store.Workspace
	if err := s.store.View(ctx, func(tx store.Tx) (err error) { wss, err = tx.ListWorkspaces(); return err }); err != nil {
		return reaped, 0, err
	}
	n := len(reaped.Ended)
	for _, ws := range wss {
		ended := 0
		// What this Service runs there is read before the transaction,
		// under the workspace's start lock, held until the transaction
		// ends: a turn this Service launches meanwhile (a queued
		// instruction delivered when a reaped run's end is recorded)
		// either runs already, and is read here, or marks its row running
		// after this sweep. Without the lock its row could be marked
		// running after the read and ended by the sweep while it runs.
		// The lock is taken before the transaction, as a launch takes it
		// (a launch holds it across store calls of its own, so taking it
		// inside a transaction deadlocks with a launch under way).
		sl := s.slot(ws.ID)
		sl.start.Lock()
		runID, runs := s.Running(ws.ID)
		err := s.store.Update(ctx, func(tx store.Tx) error {
			ended = 0
			sessions, err := tx.ListSessions(ws.ID)
			if err != nil {
				return err
			}
			now := s.clock.Now()
			for _, sess := range sessions {
				if sess.Status != store.SessionRunning {
					continue
				}
				if (runs && runID == sess.ID) || held[sess.ID] {
					continue
				}
				sess.Status, sess.EndedAt, sess.EndReason = store.SessionEnded, now, "interrupted by a restart"
				if err := tx.PutSession(sess); err != nil {
					return err
				}
				ended++
			}
			if ended > 0 {
				return workspace.Refresh(tx, ws.ID, now)
			}
			return nil
		})
		sl.start.Unlock()
		if err != nil {
			return reaped, n, err
		}
		n += ended
	}
	return reaped, n, s.rankAll(ctx)
}

// rankAll links the sessions of every workspace that keeps no ranking yet.
func (s *Service) rankAll(ctx context.Context) error {
	return workspace.RankAll(ctx, s.store, s.clock.Now)
}
