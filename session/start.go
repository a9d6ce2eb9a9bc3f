package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// TurnRequest asks for an ordinary turn in a workspace.
type TurnRequest struct {
	Workspace baton.WorkspaceID
	// Prompt is the turn's opening prompt (required).
	Prompt string
	// Session names a session to resume explicitly; an explicit resume
	// re-activates it even if it was rolled back. Empty: resume implicitly
	// when the implicit-resume rule finds a session, else start fresh.
	Session baton.SessionID
	// Fresh forces a new session even when one could be resumed.
	Fresh bool
}

// Start starts or resumes a session and waits (until ctx is done) for the
// engine to confirm readiness; it returns the session as recorded then.
// Errors: baton.ErrInvalid (bad input), ErrNoWorkspace,
// ErrArchived, ErrWorkspaceBusy (reserved),
// ErrSessionRunning, ErrNoSession (explicit session unknown),
// ErrLaunchRefused (another process reaped the launch before the engine
// let it run: see Launch), and the
// engine's errors (engine.ErrSessionMissing, engine.ErrReadyRejected, ...)
// after which the session row is marked ended with the reason. Not safe to
// retry blindly after an engine error: the row shows what happened.
func (s *Service) Start(ctx context.Context, req TurnRequest) (store.Session, error) {
	if ctx == nil {
		return store.Session{}, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := baton.CheckField(baton.FieldPrompt, req.Prompt); err != nil {
		return store.Session{}, err
	}
	p, sess, err := s.launchStart(ctx, req)
	if err != nil {
		return store.Session{}, err
	}
	return s.awaitReady(ctx, p, sess)
}

// launchStart chooses the session and launches it. One ordinary start at a time
// per workspace, and none while a process runs there: checked before a row
// is chosen, so a refused start never touches the row of the session that
// runs, and a previous run's late end never lands on the next run.
func (s *Service) launchStart(ctx context.Context, req TurnRequest) (engine.Process, store.Session, error) {
	// A reserved workspace answers busy before anything else (and again in
	// the transaction below, which is what counts).
	if err := s.AssertWritable(ctx, req.Workspace); err != nil {
		return nil, store.Session{}, err
	}
	return s.launchPicked(ctx, req.Workspace, func(tx store.Tx, ws store.Workspace) (store.Session, string, error) {
		if ws.Archived {
			return store.Session{}, "", ErrArchived
		}
		if err := workspace.CheckWritable(tx, ws.ID, baton.Token{}, 0); err != nil {
			return store.Session{}, "", err
		}
		if err := s.strayLaunch(tx, ws.ID); err != nil {
			return store.Session{}, "", err
		}
		sess, err := s.choose(tx, ws, req)
		return sess, req.Prompt, err
	}, func(sess store.Session, lid baton.LaunchID, err error) {
		// A launch another process reaped before it could run is that
		// process's to settle: this row may be its run by now.
		if !errors.As(err, new(reapedError)) {
			s.endWith(sess.ID, "start failed: "+err.Error(), false, false, lid)
		}
	})
}

// launchPicked launches a turn in workspace ws under its start lock, once
// its slot is free: pick, inside the transaction that records the launch,
// checks the workspace and chooses the session (recorded as running) and
// the prompt; a zero session launches nothing. When the engine refuses the
// launch, failed runs, still under the lock.
func (s *Service) launchPicked(ctx context.Context, ws baton.WorkspaceID, pick func(store.Tx, store.Workspace) (store.Session, string, error),
	failed func(store.Session, baton.LaunchID, error)) (engine.Process, store.Session, error) {
	sl := s.slot(ws)
	sl.start.Lock()
	defer sl.start.Unlock()
	if err := sl.acquire(ctx); err != nil {
		return nil, store.Session{}, err
	}
	sl.mu.Unlock()
	var (
		sess        store.Session
		prompt, dir string
	)
	lid := workspace.NewLaunchID()
	// Owned before its record commits: a reap by this Service meanwhile
	// (Reconcile while a queued instruction is delivered) must not take
	// the record for an earlier process's and end the row it runs.
	s.own(lid)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		w, err := workspace.GetWorkspace(tx, ws)
		if err != nil {
			return err
		}
		if sess, prompt, err = pick(tx, w); err != nil || sess.ID == "" {
			return err
		}
		dir = w.Root
		now := s.clock.Now()
		return workspace.RecordLaunch(tx, store.Launch{ID: lid, Workspace: ws, Session: sess.ID, Holder: s.id, Host: s.host,
			Engine: sess.Config.Engine, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil || sess.ID == "" {
		s.disown(lid)
		return nil, store.Session{}, err
	}
	p, err := s.launchTurn(ctx, sess, prompt, dir, lid)
	if err != nil {
		failed(sess, lid, err)
		return nil, sess, err
	}
	return p, sess, nil
}

// launchTurn launches a session recorded as running, with prompt: a
// resume when it has a native id, fresh otherwise. When it exits its end
// is recorded and the next queued instruction delivered.
func (s *Service) launchTurn(ctx context.Context, sess store.Session, prompt, dir string, lid baton.LaunchID) (engine.Process, error) {
	sreq := engine.StartRequest{
		Workspace: sess.Workspace, Session: sess.ID, Config: sess.Config,
		Mode: engine.Fresh, Turn: engine.Normal, Prompt: prompt, Dir: dir, LaunchID: lid,
	}
	if sess.NativeID != "" {
		sreq.Mode, sreq.NativeID = engine.Resume, sess.NativeID
	}
	return s.sup().Launch(ctx, workspace.LaunchRequest{StartRequest: sreq, OnExit: func(st engine.ExitStatus) {
		s.endWith(sess.ID, endReason(st), false, false, lid)
		s.afterTurn(sess.Workspace) // the next queued instruction, if any
	}})
}

// sessionOf reads session id of workspace ws: ErrNoSession (what says
// which session) when there is none, or it is another workspace's.
func sessionOf(tx store.Tx, ws baton.WorkspaceID, id baton.SessionID, what string) (store.Session, error) {
	s, err := tx.GetSession(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.Workspace != ws) {
		return store.Session{}, baton.Errorf(workspace.ErrNoSession, "%s%s", what, id)
	}
	return s, err
}

// choose picks the session to run and records it as running and activated.
func (s *Service) choose(tx store.Tx, ws store.Workspace, req TurnRequest) (store.Session, error) {
	now := s.clock.Now()
	var sess store.Session
	switch {
	case req.Session != "":
		got, err := sessionOf(tx, ws.ID, req.Session, "")
		if err != nil {
			return store.Session{}, err
		}
		sess = got
	case !req.Fresh:
		got, ok, err := workspace.ImplicitResume(tx, ws, ws.Config)
		if err != nil {
			return store.Session{}, err
		}
		if ok {
			sess = got
		}
	}
	if sess.ID == "" {
		sess = store.Session{ID: newSessionID(), Workspace: ws.ID, Config: ws.Config, CreatedAt: now}
	}
	sess.Status = store.SessionRunning
	sess.StartedAt = now
	sess.EndedAt, sess.EndReason = time.Time{}, ""
	if err := tx.PutSession(sess); err != nil {
		return store.Session{}, err
	}
	return workspace.Activate(tx, sess.ID, now)
}

// awaitReady waits for the launched session's readiness and records it,
// with what the engine reported it really runs (RecordActual).
func (s *Service) awaitReady(ctx context.Context, p engine.Process, sess store.Session) (store.Session, error) {
	native, err := p.Ready(ctx)
	if err != nil {
		// The process may still be alive (ctx ended first); stop it so the
		// workspace is not left with an unrecorded writer.
		_, _ = p.Stop(context.WithoutCancel(ctx))
		// Say why readiness failed even if the exit watcher recorded the
		// process's exit first: the reason briefs a later continuation.
		reason := "not ready: " + err.Error()
		select {
		case <-p.Done():
			if st := p.Exit(); !st.Stopped {
				reason += " (" + endReason(st) + ")"
			}
		default:
		}
		s.endWith(sess.ID, reason, true, false, "")
		return store.Session{}, err
	}
	var out store.Session
	err = s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := tx.GetSession(sess.ID)
		if err != nil {
			return err
		}
		changed := workspace.RecordActual(&cur, engine.ActualOf(p)) || cur.NativeID != native
		cur.NativeID = native
		out = cur
		if !changed {
			return nil // nothing new: no write, and no change-feed entry
		}
		return tx.PutSession(cur)
	})
	return out, err
}

// endWith records a session's end. With overwrite, an end already recorded
// by the exit watcher gets this more precise reason (a row running again
// is never touched).
// With idle, a row still idle is ended too: a transfer's target runs while
// its row is idle until the completion commits, and an end that wins the
// race against that commit must still be on record (the completion then
// keeps it ended).
// With launch, the launch's record is closed in the same transaction, and
// a row that runs again for a later launch of the session (another node
// relaunched it after reaping this one) is left as it is.
// It returns the session's workspace ("" when the row could not be read).
func (s *Service) endWith(id baton.SessionID, reason string, overwrite, idle bool, launch baton.LaunchID) (ws baton.WorkspaceID) {
	err := s.store.Update(context.Background(), func(tx store.Tx) error {
		if err := workspace.LaunchGone(tx, launch, reason, s.clock.Now()); err != nil {
			return err
		}
		cur, err := tx.GetSession(id)
		if err != nil {
			return err
		}
		ws = cur.Workspace
		if cur.Status == store.SessionEnded && overwrite {
			cur.EndReason = reason
			return tx.PutSession(cur)
		}
		if cur.Status != store.SessionRunning && (!idle || cur.Status != store.SessionIdle) {
			return nil
		}
		if again, err := workspace.RelaunchedSince(tx, id, launch); err != nil || again {
			return err
		}
		now := s.clock.Now()
		cur.Status, cur.EndedAt, cur.EndReason = store.SessionEnded, now, reason
		return workspace.RecordEnd(tx, cur, now)
	})
	if err != nil {
		s.log.Warn("recording session end failed", zapSession(id), zapErr(err))
		return ws
	}
	if launch != "" {
		s.disown(launch)
	}
	return ws
}

func endReason(st engine.ExitStatus) string {
	switch {
	case st.Stopped:
		return "stopped"
	case st.Err != nil:
		return "error: " + st.Err.Error()
	case st.Code != 0:
		return fmt.Sprintf("exit code %d", st.Code)
	default:
		return "exited"
	}
}

// Stop stops the process running in the workspace and returns the confirmed
// outcome (engine.NotRunning when nothing runs). Errors: ErrWorkspaceBusy
// while reserved (a pending transfer is
// stopped through its coordinator), ErrNoWorkspace.
func (s *Service) Stop(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error) {
	if err := s.AssertWritable(ctx, ws); err != nil {
		return "", err
	}
	return s.sup().Halt(ctx, ws)
}

// RecordEnd records that session id's process ended with st, if the row
// still says it runs or is still idle (a transfer's target whose first turn
// ended before its completion committed). Callers that launch through
// Launch with their own session rows (the transfer coordinator) hand it to
// LaunchRequest.OnExit.
//
// launch, when set, is the launch whose process ended: its record is
// closed in the same transaction.
//
// Once the workspace is not reserved, its next queued instruction is
// delivered (see Message).
func (p *supervisor) RecordEnd(id baton.SessionID, launch baton.LaunchID, st engine.ExitStatus) {
	s := p.svc()
	if ws := s.endWith(id, endReason(st), false, true, launch); ws != "" {
		s.afterTurn(ws)
	}
}
