package session

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// Refusals of the instruction queue; callers match their code,
// baton.ErrConflict.
var (
	// errInstructionCancelled: a resend of a cancelled instruction.
	errInstructionCancelled = baton.NewError(baton.ErrConflict, "the instruction was cancelled")
	// errInstructionDelivered: a cancel of an instruction already handed
	// to the agent.
	errInstructionDelivered = baton.NewError(baton.ErrConflict, "the instruction was already delivered")
)

// Message sends text to the workspace's agent. Every message is recorded as
// a store.Instruction, so that it is listed with its delivery state until
// the user sees it through:
//
//   - While a process runs in the workspace (the agent is busy with a
//     turn), or earlier instructions still wait, the message is queued:
//     it is returned pending and delivered, oldest first, when the running
//     turn ends (see DeliverPending).
//   - Otherwise it is delivered at once as the prompt of a new turn (a
//     resume of the current session when the implicit-resume rule allows,
//     else a fresh session), and Message waits, until ctx is done, for the
//     engine to confirm readiness.
//
// Delivery is write-ahead: an instruction is marked unknown before its
// engine is asked, and delivered once the engine confirmed the turn. An
// instruction whose turn was launched but not confirmed (the process
// ended, a transfer or a crash cut in) stays unknown: it is never
// delivered again unless ResendInstruction is called. A launch refused
// before anything ran puts it back to pending.
//
// Errors: baton.ErrInvalid (empty or over baton.MaxPromptBytes text, malformed
// workspace id), ErrNoWorkspace, ErrArchived, ErrWorkspaceBusy (a
// transfer holds the workspace: nothing is queued), the store's. An engine failure of the delivery is not an error of Message:
// the returned instruction says how it went (pending or unknown).
func (s *Service) Message(ctx context.Context, ws baton.WorkspaceID, text string) (store.Instruction, error) {
	if ctx == nil {
		return store.Instruction{}, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := baton.CheckField("message", text); err != nil {
		return store.Instruction{}, err
	}
	now := s.clock.Now()
	in := store.Instruction{
		ID: baton.InstructionID(ids.New("ins")), Workspace: ws, Text: text,
		State: store.InstructionPending, CreatedAt: now, UpdatedAt: now,
	}
	err := s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetActive(tx, ws); err != nil {
			return err
		}
		if err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {
			return err
		}
		return tx.PutInstruction(in)
	})
	if err != nil {
		return store.Instruction{}, err
	}
	if _, running := s.Running(ws); running {
		return in, nil
	}
	// Nothing runs: deliver the oldest pending instruction now (this one,
	// unless older ones still wait: order is kept).
	got, ok, err := s.DeliverPending(ctx, ws)
	if err == nil && ok && got.ID == in.ID {
		return got, nil
	}
	return s.instruction(ctx, ws, in.ID)
}

// ResendInstruction delivers an instruction again, on the user's explicit
// request: an unknown or delivered one is queued as pending again (and a
// pending one stays so), then delivered at once if nothing runs, oldest
// pending first. It returns the instruction as it is then.
// Errors: baton.ErrNotFound (no such instruction in ws), baton.ErrConflict
// (the instruction was cancelled),
// ErrWorkspaceBusy while a transfer holds the workspace, the store's.
func (s *Service) ResendInstruction(ctx context.Context, ws baton.WorkspaceID, id baton.InstructionID) (store.Instruction, error) {
	err := s.updateInstruction(ctx, ws, id, func(tx store.Tx, in store.Instruction) error {
		if err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {
			return err
		}
		switch in.State {
		case store.InstructionCancelled:
			return baton.Errorf(errInstructionCancelled, "%s", id)
		case store.InstructionPending:
			return nil
		}
		in.State, in.Session, in.UpdatedAt = store.InstructionPending, "", s.clock.Now()
		return tx.PutInstruction(in)
	})
	if err != nil {
		return store.Instruction{}, err
	}
	if _, running := s.Running(ws); !running {
		if _, _, err := s.DeliverPending(ctx, ws); err != nil {
			return store.Instruction{}, err
		}
	}
	return s.instruction(ctx, ws, id)
}

// CancelInstruction withdraws an instruction that was not delivered
// (pending or unknown): it is kept, cancelled, and never delivered.
// Cancelling a cancelled one returns it unchanged. Errors:
// baton.ErrNotFound (no such instruction in ws), baton.ErrConflict (it was
// already delivered), ErrWorkspaceBusy
// while a transfer holds the workspace, the store's.
func (s *Service) CancelInstruction(ctx context.Context, ws baton.WorkspaceID, id baton.InstructionID) (out store.Instruction, err error) {
	err = s.updateInstruction(ctx, ws, id, func(tx store.Tx, in store.Instruction) error {
		if err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {
			return err
		}
		switch in.State {
		case store.InstructionCancelled:
			out = in
			return nil
		case store.InstructionDelivered:
			return baton.Errorf(errInstructionDelivered, "%s", id)
		}
		in.State, in.UpdatedAt = store.InstructionCancelled, s.clock.Now()
		out = in
		return tx.PutInstruction(in)
	})
	return out, err
}

// updateInstruction runs fn on instruction id of ws inside one Update.
// Errors: baton.ErrInvalid for a nil context, getInstruction's, fn's, the
// store's.
func (s *Service) updateInstruction(ctx context.Context, ws baton.WorkspaceID, id baton.InstructionID, fn func(store.Tx, store.Instruction) error) error {
	if ctx == nil {
		return baton.Errorf(baton.ErrInvalid, "nil context")
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		in, err := getInstruction(tx, ws, id)
		if err != nil {
			return err
		}
		return fn(tx, in)
	})
}

// DeliverPending delivers the workspace's oldest pending instruction when
// nothing runs there and no transfer holds it, and reports whether it
// launched one (its turn's end delivers the next). A host calls it when a
// turn it did not start through Message ends (an ordinary Start, a
// transfer's target), so that queued instructions are not left waiting.
// It is safe to call at any time and concurrently: an instruction is
// delivered once. Errors: the store's; ErrWorkspaceBusy and
// ErrSessionRunning are not errors here (ok is false). It launches a turn
// with the oldest pending instruction and waits for the engine to confirm
// it.
func (s *Service) DeliverPending(ctx context.Context, ws baton.WorkspaceID) (store.Instruction, bool, error) {
	if ctx == nil {
		return store.Instruction{}, false, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	var (
		in      store.Instruction
		refused bool  // the engine refused the launch
		settled error // putting the instruction back to pending then
	)
	// The turn is launched under the workspace's start lock, like Start, so
	// that two deliveries never pick the same instruction nor race for the
	// process slot.
	p, sess, err := s.launchPicked(ctx, ws, func(tx store.Tx, w store.Workspace) (store.Session, string, error) {
		in = store.Instruction{}
		if w.Archived || workspace.CheckWritable(tx, ws, baton.Token{}, 0) != nil {
			return store.Session{}, "", nil // a transfer keeps the queue as it is
		}
		if err := s.strayLaunch(tx, ws); errors.Is(err, ErrSessionRunning) {
			return store.Session{}, "", nil // an earlier process's launch may still run
		} else if err != nil {
			return store.Session{}, "", err
		}
		open, err := tx.OpenInstructions(ws)
		if err != nil {
			return store.Session{}, "", err
		}
		// The oldest pending instruction.
		i := slices.IndexFunc(open, func(in store.Instruction) bool { return in.State == store.InstructionPending })
		if i < 0 {
			return store.Session{}, "", nil
		}
		sess, err := s.choose(tx, w, TurnRequest{Workspace: ws, Prompt: open[i].Text})
		if err != nil {
			return store.Session{}, "", err
		}
		in = open[i]
		// Write-ahead: from here a crash leaves it unknown, never pending.
		in.State, in.Session, in.UpdatedAt = store.InstructionUnknown, sess.ID, s.clock.Now()
		return sess, in.Text, tx.PutInstruction(in)
	}, func(sess store.Session, lid baton.LaunchID, err error) {
		// Nothing ran: the instruction waits for the next turn's end.
		s.endWith(sess.ID, "start failed: "+err.Error(), false, false, lid, nil)
		s.log.Warn("instruction delivery refused", zapSession(sess.ID), zap.Error(err))
		refused = true
		in, settled = s.settleInstruction(ctx, in, store.InstructionPending)
	})
	switch {
	case refused:
		return in, false, settled
	case errors.Is(err, ErrSessionRunning):
		return store.Instruction{}, false, nil // the running turn's end delivers it
	case err != nil || p == nil:
		return store.Instruction{}, false, err
	}
	if _, err := s.awaitReady(ctx, p, sess); err != nil {
		s.log.Warn("instruction delivery not confirmed", zapSession(sess.ID), zap.Error(err))
		in, err = s.instruction(context.WithoutCancel(ctx), ws, in.ID) // stays unknown
		return in, true, err
	}
	in, err = s.settleInstruction(ctx, in, store.InstructionDelivered)
	return in, true, err
}

// afterTurn delivers the next pending instruction once the turn that just
// ended has left its slot. It runs in its own goroutine, counted in the
// Service's wait group, and does nothing once the Service is closed.
func (s *Service) afterTurn(ws baton.WorkspaceID) {
	if err := s.enter(); err != nil {
		return
	}
	go func() {
		defer s.wg.Done()
		if _, _, err := s.DeliverPending(context.Background(), ws); err != nil {
			s.log.Warn("delivering a queued instruction failed", zap.Error(err))
		}
	}()
}

// settleInstruction moves in from unknown to state, unless something else
// (a cancel, a resend) changed it since.
func (s *Service) settleInstruction(ctx context.Context, in store.Instruction, state store.InstructionState) (out store.Instruction, err error) {
	err = s.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		if out, err = tx.GetInstruction(in.ID); err != nil || out.State != store.InstructionUnknown || out.Session != in.Session {
			return err
		}
		out.State, out.UpdatedAt = state, s.clock.Now()
		if state == store.InstructionPending {
			out.Session = ""
		}
		return tx.PutInstruction(out)
	})
	return out, err
}

func (s *Service) instruction(ctx context.Context, ws baton.WorkspaceID, id baton.InstructionID) (out store.Instruction, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error { out, err = getInstruction(tx, ws, id); return err })
	return out, err
}

// errNoInstruction: no such instruction in that workspace.
var errNoInstruction = baton.NewError(baton.ErrNotFound, "no such instruction")

func getInstruction(tx store.Tx, ws baton.WorkspaceID, id baton.InstructionID) (store.Instruction, error) {
	in, err := tx.GetInstruction(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && in.Workspace != ws) {
		return store.Instruction{}, baton.Errorf(errNoInstruction, "%s", id)
	}
	return in, err
}

// ScheduleWakeup stores a wakeup: Prompt delivered at At, to the pinned
// Session when set (it must belong to the workspace), else to whichever
// session is current then. Errors: baton.ErrInvalid (empty or over-long
// prompt, zero time), ErrNoWorkspace, ErrNoSession (pinned
// session unknown or of another workspace).
func (s *Service) ScheduleWakeup(ctx context.Context, w store.Wakeup) (store.Wakeup, error) {
	if err := baton.CheckField("prompt", w.Prompt); err != nil {
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

// FireDue delivers the wakeups due now, at most limit (<= 0: all), and
// returns each one it handled as it then stands: fired (delivered: its
// session resumed with the prompt), pending (deferred: its workspace is
// reserved, a transfer is pending, or already runs a process; neither fired
// nor dropped), or cancelled with its Reason (refused: delivery is
// resume-only, and the pinned session, or the current one, has no native id
// on the workspace's engine and account). A wakeup is marked fired in the
// transaction before its launch, so a crash never fires it twice. Errors
// are the store's; an engine failure of one wakeup does not stop the others
// (the session row records it).
func (s *Service) FireDue(ctx context.Context, limit int) ([]store.Wakeup, error) {
	var res, due []store.Wakeup
	if err := s.store.View(ctx, func(tx store.Tx) (err error) { due, err = tx.DueWakeups(s.clock.Now(), limit); return err }); err != nil {
		return res, err
	}
	for _, w := range due {
		if _, busy := s.Running(w.Workspace); busy {
			res = append(res, w)
			continue
		}
		var target store.Session
		var handled bool
		err := s.store.Update(ctx, func(tx store.Tx) error {
			handled = false
			cur, err := tx.GetWakeup(w.ID)
			if err != nil || cur.Status != store.WakeupPending {
				return err
			}
			w, handled = cur, true
			if r, err := workspace.Reserved(tx, cur.Workspace); err != nil || r {
				return err
			}
			var why string
			if target, why, err = s.wakeupTarget(tx, cur); err != nil {
				return err
			}
			cur.Status, cur.UpdatedAt = store.WakeupFired, s.clock.Now()
			if target.ID == "" {
				cur.Status, cur.Reason = store.WakeupCancelled, why
			}
			w = cur
			return tx.PutWakeup(cur)
		})
		switch {
		case err != nil:
			return res, err
		case !handled:
			continue
		case w.Status == store.WakeupFired:
			_, err := s.Start(ctx, TurnRequest{Workspace: w.Workspace, Session: target.ID, Prompt: w.Prompt})
			switch {
			case errors.Is(err, workspace.ErrWorkspaceBusy), errors.Is(err, ErrSessionRunning):
				// Refused before the engine was called (a transfer reserved
				// the workspace, or a process started, in between): put
				// it back rather than drop it.
				if w, err = s.repend(ctx, w.ID); err != nil {
					return res, err
				}
			case err != nil:
				s.log.Warn("wakeup delivery failed", zapSession(target.ID), zap.Error(err))
			}
		}
		res = append(res, w)
	}
	return res, nil
}

// repend puts a wakeup marked fired back to pending and returns it.
func (s *Service) repend(ctx context.Context, id baton.WakeupID) (w store.Wakeup, err error) {
	err = s.store.Update(ctx, func(tx store.Tx) error {
		if w, err = tx.GetWakeup(id); err != nil || w.Status != store.WakeupFired {
			return err
		}
		w.Status, w.UpdatedAt = store.WakeupPending, s.clock.Now()
		return tx.PutWakeup(w)
	})
	return w, err
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
		if sess, ok, err := workspace.ImplicitResume(tx, ws, ws.Config); ok || err != nil {
			return sess, "", err
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
