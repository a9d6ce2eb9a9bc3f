package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

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
func mayRun(tx store.Tx, req workspace.LaunchRequest) (l store.Launch, found bool, err error) {
	if err := workspace.CheckWritable(tx, req.Workspace, req.Owner, req.Epoch); err != nil {
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
	case l.Gone:
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
func (s *Service) admit(ctx context.Context, req workspace.LaunchRequest) error {
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
// fence refuses (workspace.ErrStaleEpoch, ErrWorkspaceBusy, ErrLaunchRefused); a
// check that could not be made (the store failed) leaves the process
// running, as it would without the check.
func (s *Service) recheck(ctx context.Context, req workspace.LaunchRequest) error {
	err := s.store.View(context.WithoutCancel(ctx), func(tx store.Tx) error {
		_, _, err := mayRun(tx, req)
		return err
	})
	if err != nil && !errors.Is(err, workspace.ErrStaleEpoch) && !errors.Is(err, workspace.ErrWorkspaceBusy) && !errors.Is(err, ErrLaunchRefused) {
		s.log.Warn("the fence could not be checked again after a start", zapLaunch(req.LaunchID), zap.Error(err))
		return nil
	}
	return err
}

// strayLaunch reports a live launch of the workspace this Service did not
// make (a previous process's, not confirmed gone): a start must wait until
// it is reaped. Returns ErrSessionRunning naming its session.
func (s *Service) strayLaunch(tx store.Tx, ws baton.WorkspaceID) error {
	live, err := tx.LiveLaunches(ws)
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(live, func(l store.Launch) bool { return !s.owns(l.ID) }); i >= 0 {
		return baton.Errorf(ErrSessionRunning, "session %s: launch %s of an earlier process may still run (reap it with Recover)", live[i].Session, live[i].ID)
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
// are not released). Each launch is logged: at info when it was confirmed
// gone (killed or found not running), at warn when it was not. Errors: the
// store's; an engine's reap error leaves that launch unconfirmed.
func (p *supervisor) Reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool) (workspace.ReapResult, error) {
	return p.svc().reap(ctx, ws, keep, "interrupted: its process is gone")
}

// reap is Reap, ending the rows of the reaped launches' sessions with
// reason.
func (s *Service) reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool, reason string) (workspace.ReapResult, error) {
	var res workspace.ReapResult
	var live []store.Launch
	if err := s.store.View(ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err }); err != nil {
		return res, err
	}
	for _, l := range live {
		if s.owns(l.ID) || (keep != nil && keep(l.Holder)) {
			continue
		}
		r, ended, err := s.reapRecord(ctx, l, reason)
		if err != nil {
			return res, err
		}
		fields := []zap.Field{zapWorkspace(r.Workspace), zapSession(r.Session), zapLaunch(r.ID), zap.String("engine", r.Engine),
			zap.String("holder", r.Holder), zap.String("outcome", string(r.Outcome))}
		if !r.Outcome.Confirmed() {
			s.log.Warn("launch of an earlier process not confirmed gone; its workspace stays held", append(fields, zap.Error(r.Err))...)
			res.Unconfirmed = append(res.Unconfirmed, r)
			continue
		}
		msg := "launch of an earlier process found gone"
		if r.Outcome == engine.Stopped {
			msg = "launch of an earlier process found running and killed"
		}
		s.log.Info(msg, fields...)
		res.Gone = append(res.Gone, r)
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
// endReaped, with reason). It reports what became of the launch (its
// Outcome is engine.Stopped when any reap found it running) and whether
// the row was ended; the error is the store's.
func (s *Service) reapRecord(ctx context.Context, l store.Launch, reason string) (r workspace.Reaped, ended bool, err error) {
	killed := false
	for raced := false; ; raced = true {
		e, _ := s.engineOf(l.Engine) // nil when not registered: no engine.Reaper
		if _, reaper := e.(engine.Reaper); raced && !reaper {
			return workspace.Reaped{Launch: l, Outcome: engine.Failed,
				Err: errors.New("admitted while it was being reaped, and no engine.Reaper can confirm it gone")}, false, nil
		}
		out, rerr := s.reapOne(ctx, l)
		killed = killed || out == engine.Stopped
		if !out.Confirmed() {
			if rerr == nil {
				rerr = fmt.Errorf("the engine answered %s", out)
			}
			return workspace.Reaped{Launch: l, Outcome: out, Err: rerr}, false, nil
		}
		var admitted *store.Launch // admitted since l was read
		if err := s.store.Update(ctx, func(tx store.Tx) (err error) {
			admitted, ended = nil, false
			cur, err := tx.GetLaunch(l.ID)
			if err == nil && cur.Admitted && !l.Admitted && !cur.Gone {
				admitted = &cur
				return nil
			}
			if err := workspace.LaunchGone(tx, l.ID, "reaped: "+string(out), s.clock.Now()); err != nil {
				return err
			}
			ended, err = workspace.EndReaped(tx, l, reason, s.clock.Now())
			return err
		}); err != nil {
			return workspace.Reaped{Launch: l, Outcome: engine.Failed, Err: err}, false, err
		}
		if admitted == nil {
			if killed {
				out = engine.Stopped
			}
			return workspace.Reaped{Launch: l, Outcome: out}, ended, nil
		}
		l = *admitted
	}
}

// engineOf returns the engine named name: the Service's, or the one its
// engine.Registry has under that name.
func (s *Service) engineOf(name string) (engine.Engine, error) {
	r, ok := s.engine.(engine.Registry)
	if !ok {
		return s.engine, nil
	}
	if e := r[strings.TrimSpace(name)]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("engine %q is not registered", name)
}

// reapOne confirms launch l gone, within the Service's stop timeout (a
// reap not confirmed by then leaves it unconfirmed). An engine that is not
// an engine.Reaper runs processes that die with their host (in-process
// engines): a launch of a process that is gone is gone with it.
func (s *Service) reapOne(ctx context.Context, l store.Launch) (engine.StopOutcome, error) {
	e, err := s.engineOf(l.Engine)
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
	rctx, cancel := clock.WithTimeout(ctx, s.clock, s.stopTime)
	defer cancel()
	out, err := rp.ReapLaunch(rctx, l.ID)
	if !out.Confirmed() && context.Cause(rctx) == context.DeadlineExceeded {
		out, err = engine.Timeout, fmt.Errorf("the reap was not confirmed within %s", s.stopTime)
	}
	return out, err
}

// CloseUnspawned closes, inside tx, the records of handoff h's launches
// that this Service recorded but is not running: launches that were never
// spawned (the transfer moved on first), whose end is being recorded, or
// whose process ended with its record left to the caller
// (LaunchRequest.KeepRecord).
// Launches of other processes are left alone: only a Reap may close them.
// The transfer coordinator calls it whenever an attempt settles.
func (p *supervisor) CloseUnspawned(tx store.Tx, ws baton.WorkspaceID, h baton.HandoffID) error {
	s := p.svc()
	live, err := tx.LiveLaunches(ws)
	if err != nil {
		return err
	}
	for _, l := range live {
		if l.Handoff != h || l.Holder != s.id || s.owns(l.ID) {
			continue
		}
		// Forgotten here already: should this transaction not commit,
		// the launch is still not this Service's, and the next settling
		// closes it.
		reason := cmp.Or(s.takeExit(l.ID), "not spawned")
		if err := workspace.LaunchGone(tx, l.ID, reason, s.clock.Now()); err != nil {
			return err
		}
	}
	return nil
}

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
				if sess.Status != store.SessionRunning || (runs && runID == sess.ID) || held[sess.ID] {
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
	// Last, link the sessions of every workspace that keeps no ranking yet.
	return reaped, n, workspace.RankAll(ctx, s.store, s.clock.Now)
}
