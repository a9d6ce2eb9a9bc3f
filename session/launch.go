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

// reapedError refuses the admission of a launch whose record another
// process closed first (it reaped the launch and found nothing): the
// launch and the rows it was made for are that process's to settle now.
// It matches ErrLaunchRefused.
type reapedError struct{ error }

func (e reapedError) Unwrap() error { return e.error }

// mayRun checks, inside tx, that launch req may still run: its owner may
// write the workspace (the reservation's epoch and owner still hold) and
// its record, when there is one, was not closed. It returns the record
// (found false when there is none). Errors: CheckWritable's, a
// reapedError.
func mayRun(tx store.Tx, req LaunchRequest) (l store.Launch, found bool, err error) {
	if err := CheckWritable(tx, req.Workspace, Owner{Token: req.Owner, Epoch: req.Epoch}); err != nil {
		return l, false, err
	}
	if req.LaunchID == "" {
		return l, false, nil
	}
	l, err = tx.GetLaunch(req.LaunchID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return l, false, nil
	case err != nil:
		return l, false, err
	case l.State == store.LaunchGone:
		return l, true, reapedError{baton.Errorf(ErrLaunchRefused, "launch %s was closed before its admission (%s)", l.ID, l.EndReason)}
	}
	return l, true, nil
}

// admit is the second phase of a two-phase start (engine.StartRequest.Admit),
// called by the engine after the spawn and before the agent runs: it
// commits the launch's admission only while mayRun holds. A reap that
// closed the record first, or a take of the reservation since the launch
// was recorded, refuses it; a reap that commits after it sees the record
// admitted (see Reap).
func (s *Service) admit(ctx context.Context, req LaunchRequest) error {
	return s.store.Update(ctx, func(tx store.Tx) error {
		l, found, err := mayRun(tx, req)
		if err != nil || !found || l.Admitted {
			return err
		}
		l.Admitted, l.UpdatedAt = true, s.clock.Now()
		return tx.PutLaunch(l)
	})
}

// recheck is the fence check after a start an engine made without
// admission: best effort, since the agent may have run meanwhile. Only a
// fence refuses (ErrStaleEpoch, ErrWorkspaceBusy, ErrLaunchRefused); a
// check that could not be made (the store failed) leaves the process
// running, as it would without the check.
func (s *Service) recheck(ctx context.Context, req LaunchRequest) error {
	err := s.store.View(context.WithoutCancel(ctx), func(tx store.Tx) error {
		_, _, err := mayRun(tx, req)
		return err
	})
	if err != nil && !errors.Is(err, ErrStaleEpoch) && !errors.Is(err, ErrWorkspaceBusy) && !errors.Is(err, ErrLaunchRefused) {
		s.log.Warn("the fence could not be checked again after a start", zapLaunch(req.LaunchID), zapErr(err))
		return nil
	}
	return err
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
// session after a transfer moved on. The others stay live and hold their
// workspace (ordinary starts are refused with ErrSessionRunning, transfers
// are not released). Errors: the store's; an engine's reap error leaves
// that launch unconfirmed.
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
		gone, ended, err := s.reapRecord(ctx, l, reason)
		if err != nil {
			return res, err
		}
		if !gone {
			res.Unconfirmed = append(res.Unconfirmed, l)
			continue
		}
		res.Gone = append(res.Gone, l.ID)
		if ended {
			res.Ended = append(res.Ended, l.Session)
		}
	}
	return res, nil
}

// reapRecord reaps launch l and closes its record once its processes are
// confirmed gone. A two-phase start admitted between the reap's scan and
// its commit may have spawned after the scan: the record says so
// (Admitted), so the launch is reaped again, now that its process exists
// (it was spawned before its admission committed). An admission that
// comes after the commit finds the record closed and is refused. Without
// an engine.Reaper (whose scan is what confirms), such a launch stays
// unconfirmed: the process that admitted it was alive a moment ago. The
// transaction that closes the record also ends its session's row (see
// endReaped, with reason). It reports whether the launch is gone and
// whether the row was ended; the error is the store's.
func (s *Service) reapRecord(ctx context.Context, l store.Launch, reason string) (gone, ended bool, err error) {
	for raced := false; ; raced = true {
		if raced && !s.canReap(l) {
			s.log.Warn("launch of another process admitted while it was being reaped; no reaper can confirm it gone", zapSession(l.Session), zapLaunch(l.ID))
			return false, false, nil
		}
		out, err := s.reapOne(ctx, l)
		if !out.Confirmed() {
			s.log.Warn("launch of an earlier process not confirmed gone", zapSession(l.Session), zapLaunch(l.ID), zapErr(err))
			return false, false, nil
		}
		var admitted *store.Launch // admitted since l was read
		if err := s.store.Update(ctx, func(tx store.Tx) (err error) {
			admitted, ended = nil, false
			cur, err := tx.GetLaunch(l.ID)
			if err == nil && cur.Admitted && !l.Admitted && cur.State == store.LaunchLive {
				admitted = &cur
				return nil
			}
			if err := launchGone(tx, l.ID, "reaped: "+string(out), s); err != nil {
				return err
			}
			ended, err = endReaped(tx, l, reason, s.clock.Now())
			return err
		}); err != nil {
			return false, false, err
		}
		if admitted == nil {
			return true, ended, nil
		}
		l = *admitted
	}
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
	return true, recordEnd(tx, sess, now)
}

// engineOf returns the engine launch l went to.
func (s *Service) engineOf(l store.Launch) (engine.Engine, error) {
	var e engine.Engine = s.engine
	if r, ok := e.(*engine.Registry); ok {
		var found bool
		if e, found = r.Lookup(l.Engine); !found {
			return nil, fmt.Errorf("engine %q is not registered", l.Engine)
		}
	}
	return e, nil
}

// canReap reports whether launch l's engine is an engine.Reaper.
func (s *Service) canReap(l store.Launch) bool {
	e, err := s.engineOf(l)
	_, ok := e.(engine.Reaper)
	return err == nil && ok
}

// reapOne confirms launch l gone. An engine that is not an engine.Reaper
// runs processes that die with their host (in-process engines): a launch
// of a process that is gone is gone with it.
func (s *Service) reapOne(ctx context.Context, l store.Launch) (engine.StopOutcome, error) {
	e, err := s.engineOf(l)
	if err != nil {
		return engine.Failed, err
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
