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
// running forever, and the current-session rule prefers running rows. It
// launches nothing and returns how many rows it ended. Errors: the
// store's; safe to run again.
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
	return n, err
}
