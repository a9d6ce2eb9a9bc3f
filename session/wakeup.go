package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// ScheduleWakeup stores a wakeup: Prompt delivered at At, to the pinned
// Session when set (it must belong to the workspace), else to whichever
// session is current then. Errors: baton.ErrInvalid (empty or over-long
// prompt, zero time), ErrNoWorkspace, ErrNoSession (pinned
// session unknown or of another workspace).
func (s *Service) ScheduleWakeup(ctx context.Context, w store.Wakeup) (store.Wakeup, error) {
	if err := baton.CheckField(baton.FieldPrompt, w.Prompt); err != nil {
		return store.Wakeup{}, fmt.Errorf("wakeup: %w", err)
	}
	if w.At.IsZero() {
		return store.Wakeup{}, baton.Errorf(baton.ErrInvalid, "wakeup time is required")
	}
	now := s.clock.Now()
	w.ID = baton.WakeupID(ids.New("wak"))
	w.Status = store.WakeupPending
	w.CreatedAt, w.UpdatedAt = now, now
	err := s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetWorkspace(tx, w.Workspace); err != nil {
			return err
		}
		if w.Session != "" {
			if _, err := sessionOf(tx, w.Workspace, w.Session, "pinned session "); err != nil {
				return err
			}
		}
		return tx.PutWakeup(w)
	})
	if err != nil {
		return store.Wakeup{}, err
	}
	return w, nil
}

// Wakeups returns a workspace's wakeups ordered by time.
func (s *Service) Wakeups(ctx context.Context, ws baton.WorkspaceID) ([]store.Wakeup, error) {
	return list(ctx, s, ws, func(tx store.Tx, ws baton.WorkspaceID) ([]store.Wakeup, error) { return tx.ListWakeups(ws, "") })
}

// FireResult says what FireDue did with each due wakeup.
type FireResult struct {
	// Fired were delivered (resumed their session with the prompt).
	Fired []baton.WakeupID
	// Deferred stay pending: their workspace is reserved or busy. They are
	// neither fired nor dropped.
	Deferred []baton.WakeupID
	// Refused were cancelled: there was nothing they could resume (a timer
	// may only resume; it never starts a briefed fresh session).
	Refused []baton.WakeupID
}

// FireDue delivers the wakeups due now, at most limit (<= 0: all). A wakeup
// whose workspace is reserved (a transfer is pending) or already runs a
// process is deferred. Delivery is resume-only: the pinned session (or the
// current one) must have a native id on the workspace's engine and account,
// otherwise the wakeup is refused and marked cancelled. A wakeup is marked
// fired in the transaction before its launch, so a crash never fires it
// twice. Errors are the store's; an engine failure of one wakeup does not
// stop the others (the session row records it).
func (s *Service) FireDue(ctx context.Context, limit int) (FireResult, error) {
	var res FireResult
	var due []store.Wakeup
	if err := s.store.View(ctx, func(tx store.Tx) (err error) {
		due, err = tx.DueWakeups(s.clock.Now(), limit)
		return err
	}); err != nil {
		return res, err
	}
	for _, w := range due {
		if _, busy := s.Running(w.Workspace); busy {
			res.Deferred = append(res.Deferred, w.ID)
			continue
		}
		var target store.Session
		outcome := ""
		err := s.store.Update(ctx, func(tx store.Tx) error {
			outcome = ""
			cur, err := tx.GetWakeup(w.ID)
			if err != nil || cur.Status != store.WakeupPending {
				return err
			}
			if r, err := workspace.Reserved(tx, cur.Workspace); err != nil || r {
				outcome = "deferred"
				return err
			}
			var why string
			target, why, err = s.wakeupTarget(tx, cur)
			if err != nil {
				return err
			}
			cur.UpdatedAt = s.clock.Now()
			if target.ID == "" {
				cur.Status, cur.Reason, outcome = store.WakeupCancelled, why, "refused"
			} else {
				cur.Status, outcome = store.WakeupFired, "fired"
			}
			return tx.PutWakeup(cur)
		})
		if err != nil {
			return res, err
		}
		switch outcome {
		case "deferred":
			res.Deferred = append(res.Deferred, w.ID)
		case "refused":
			res.Refused = append(res.Refused, w.ID)
		case "fired":
			_, err := s.Start(ctx, TurnRequest{Workspace: w.Workspace, Session: target.ID, Prompt: w.Prompt})
			switch {
			case errors.Is(err, workspace.ErrWorkspaceBusy), errors.Is(err, workspace.ErrStaleEpoch), errors.Is(err, ErrSessionRunning):
				// Refused before the engine was called (a transfer reserved
				// the workspace, or a process started, in between): put
				// it back rather than drop it.
				if perr := s.repend(ctx, w.ID); perr != nil {
					return res, perr
				}
				res.Deferred = append(res.Deferred, w.ID)
			case err != nil:
				res.Fired = append(res.Fired, w.ID)
				s.log.Warn("wakeup delivery failed", zapSession(target.ID), zapErr(err))
			default:
				res.Fired = append(res.Fired, w.ID)
			}
		}
	}
	return res, nil
}

// repend puts a wakeup marked fired back to pending.
func (s *Service) repend(ctx context.Context, id baton.WakeupID) error {
	return s.store.Update(ctx, func(tx store.Tx) error {
		w, err := tx.GetWakeup(id)
		if err != nil || w.Status != store.WakeupFired {
			return err
		}
		w.Status, w.UpdatedAt = store.WakeupPending, s.clock.Now()
		return tx.PutWakeup(w)
	})
}

// wakeupTarget is the session a wakeup may resume: the pinned session, or
// for an unpinned wakeup the implicit-resume choice (the same rule an
// ordinary message follows). With none, it returns the zero Session and the
// reason the user is shown (a timer may only resume).
func (s *Service) wakeupTarget(tx store.Tx, w store.Wakeup) (store.Session, string, error) {
	ws, err := workspace.GetWorkspace(tx, w.Workspace)
	if err != nil {
		return store.Session{}, "", err
	}
	const only = "; a wakeup may only resume a session, never start a fresh one"
	if w.Session == "" {
		sess, ok, err := workspace.ImplicitResume(tx, ws, ws.Config)
		if err != nil {
			return store.Session{}, "", err
		}
		if ok {
			return sess, "", nil
		}
		return store.Session{}, "refused: no session with a native id on " + describe(ws.Config) + only, nil
	}
	sess, err := tx.GetSession(w.Session)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Session{}, "refused: its session " + string(w.Session) + " no longer exists" + only, nil
	case err != nil:
		return store.Session{}, "", err
	case sess.NativeID == "":
		return store.Session{}, "refused: its session " + string(w.Session) + " has no native id to resume" + only, nil
	case !sess.Config.SameAccount(ws.Config):
		return store.Session{}, "refused: its session " + string(w.Session) + " belongs to another engine or account than the workspace's " + describe(ws.Config) + only, nil
	}
	return sess, "", nil
}
