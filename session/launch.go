package session

import (
	"context"
	"errors"
	"fmt"
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
// engine.StartRequest.LaunchID; State, CreatedAt and UpdatedAt are set
// here.
func RecordLaunch(tx store.Tx, l store.Launch) error {
	if l.ID == "" || l.Workspace == "" {
		return baton.Errorf(baton.ErrInvalid, "launch record needs an id and a workspace")
	}
	if l.State == "" {
		l.State = store.LaunchLive
	}
	return tx.InsertLaunch(l)
}

// launchGone marks launch id gone inside tx, once.
func launchGone(tx store.Tx, id baton.LaunchID, reason string, s *Service) error {
	if id == "" {
		return nil
	}
	l, err := tx.GetLaunch(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || l.State == store.LaunchGone {
		return err
	}
	l.State, l.EndReason, l.UpdatedAt = store.LaunchGone, reason, s.clock.Now()
	return tx.PutLaunch(l)
}

// strayLaunch reports a live launch of the workspace this Service did not
// make (a previous process's, not confirmed gone): a start must wait until
// it is reaped. Returns ErrSessionRunning naming its session.
func (s *Service) strayLaunch(tx store.Tx, ws baton.WorkspaceID) error {
	live, err := tx.LiveLaunches(ws)
	if err != nil {
		return err
	}
	for _, l := range live {
		if !s.owns(l.ID) {
			return baton.Errorf(ErrSessionRunning, "session %s: launch %s of an earlier process may still run (reap it with Recover)", l.Session, l.ID)
		}
	}
	return nil
}

// owns reports whether launch id is a process this Service launched and
// has not yet seen end.
func (s *Service) owns(id baton.LaunchID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.launches[id]
}

// ReapResult says what Reap did with the launches of earlier processes.
type ReapResult struct {
	// Gone were confirmed gone (reaped, or found not running) and marked so.
	Gone []baton.LaunchID
	// Unconfirmed may still run: their engine is not an engine.Reaper, or
	// its reap was not confirmed. Their workspaces stay held.
	Unconfirmed []store.Launch
	// Ended are the sessions whose rows still said running and were marked
	// ended, their process gone: a row left running would stay its
	// workspace's current session.
	Ended []baton.SessionID
}

// Reap confirms gone every live launch in the store (of workspace ws, or
// of all when ws is "") that this Service did not make and whose holder
// is not in keep: through the engine's engine.Reaper, which finds the
// launch's processes even when they outlived the host that spawned them,
// stops the whole tree and confirms it gone. A confirmed launch is marked
// gone, and its session's row, when it still says it runs and no other
// launch of it is live, is ended ("interrupted: its process is gone") in
// the same transaction, so that it does not stay the workspace's current
// session after a transfer moved on; the others stay live and hold their workspace (ordinary starts are
// refused with ErrSessionRunning, transfers are not released). Errors: the
// store's; an engine's reap error leaves that launch unconfirmed.
func (s *Service) Reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool) (ReapResult, error) {
	return s.reap(ctx, ws, keep, "interrupted: its process is gone")
}

// reap is Reap, ending the rows of the reaped launches' sessions with
// reason.
func (s *Service) reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool, reason string) (ReapResult, error) {
	var res ReapResult
	var live []store.Launch
	if err := s.store.View(ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err }); err != nil {
		return res, err
	}
	for _, l := range live {
		if s.owns(l.ID) || (keep != nil && keep(l.Holder)) {
			continue
		}
		out, err := s.reapOne(ctx, l)
		if !out.Confirmed() {
			s.log.Warn("launch of an earlier process not confirmed gone", zapSession(l.Session), zapLaunch(l.ID), zapErr(err))
			res.Unconfirmed = append(res.Unconfirmed, l)
			continue
		}
		ended := false
		if err := s.store.Update(ctx, func(tx store.Tx) (err error) {
			if err := launchGone(tx, l.ID, "reaped: "+string(out), s); err != nil {
				return err
			}
			ended, err = endReaped(tx, l, reason, s.clock.Now())
			return err
		}); err != nil {
			return res, err
		}
		res.Gone = append(res.Gone, l.ID)
		if ended {
			res.Ended = append(res.Ended, l.Session)
		}
	}
	return res, nil
}

// endReaped ends, inside tx, the row of reaped launch l's session when it
// still says it runs and no other launch of it is live: its process is
// confirmed gone, and a row left running would stay the workspace's
// current session (a running session always is) after a transfer moved on.
func endReaped(tx store.Tx, l store.Launch, reason string, now time.Time) (bool, error) {
	sess, err := tx.GetSession(l.Session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case sess.Status != store.SessionRunning:
		return false, nil
	}
	live, err := tx.LiveLaunches(l.Workspace)
	if err != nil {
		return false, err
	}
	for _, o := range live {
		if o.Session == l.Session && o.ID != l.ID {
			return false, nil
		}
	}
	sess.Status, sess.EndedAt, sess.EndReason = store.SessionEnded, now, reason
	if err := tx.PutSession(sess); err != nil {
		return false, err
	}
	return true, Refresh(tx, l.Workspace, now)
}

// reapOne confirms launch l gone. An engine that is not an engine.Reaper
// runs processes that die with their host (in-process engines): a launch
// of a process that is gone is gone with it.
func (s *Service) reapOne(ctx context.Context, l store.Launch) (engine.StopOutcome, error) {
	var e engine.Engine = s.engine
	if r, ok := e.(*engine.Registry); ok {
		var found bool
		if e, found = r.Lookup(l.Engine); !found {
			return engine.Failed, fmt.Errorf("engine %q is not registered", l.Engine)
		}
	}
	rp, ok := e.(engine.Reaper)
	switch {
	case !ok:
		return engine.NotRunning, nil
	case l.Host != "" && l.Host != s.host:
		return engine.Failed, fmt.Errorf("launch %s ran on host %q: only a process there can reap it", l.ID, l.Host)
	}
	return rp.ReapLaunch(ctx, l.ID)
}

// CloseUnspawned closes, inside tx, the records of handoff h's launches
// that this Service recorded but is not running: launches that were never
// spawned (the transfer moved on first), whose end is being recorded, or
// whose process ended with its record left to the caller
// (LaunchRequest.KeepRecord).
// Launches of other processes are left alone: only a Reap may close them.
// The transfer coordinator calls it whenever an attempt settles.
func (s *Service) CloseUnspawned(tx store.Tx, ws baton.WorkspaceID, h baton.HandoffID) error {
	live, err := tx.LiveLaunches(ws)
	if err != nil {
		return err
	}
	for _, l := range live {
		if l.Handoff != h || l.Holder != s.id || s.owns(l.ID) {
			continue
		}
		reason := "not spawned"
		if r, ok := s.exitReason(l.ID); ok {
			// Forgotten here already: should this transaction not
			// commit, the launch is still not this Service's, and the
			// next settling closes it.
			reason = r
			s.forgetExit(l.ID)
		}
		if err := launchGone(tx, l.ID, reason, s); err != nil {
			return err
		}
	}
	return nil
}
