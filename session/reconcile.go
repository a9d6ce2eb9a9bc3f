package session

import (
	"context"

	"github.com/batonhq/baton/store"
)

// Reconcile is run once at start, by the only process serving the store:
// every session row still marked running whose process this Service did not
// launch is marked ended ("interrupted by a restart"), and each workspace's
// current session is refreshed. Without it a crash leaves rows running
// forever, and the current-session rule prefers running rows. It launches
// nothing and returns how many rows it ended. Errors: the store's; safe to
// run again.
func (s *Service) Reconcile(ctx context.Context) (int, error) {
	n := 0
	err := s.store.Update(ctx, func(tx store.Tx) error {
		n = 0
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
				if id, ok := s.Running(ws.ID); ok && id == sess.ID {
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
