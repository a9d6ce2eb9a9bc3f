package session

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// ErrContinuationSettled: CancelContinuation of a continuation that was
// refused; only queued and started continuations can be cancelled.
var ErrContinuationSettled = baton.NewError(baton.ECONFLICT, "the continuation was refused already")

// QueueContinuation stores c durably as queued, with everything its
// briefing needs: Task, Prompt, Target, Automated and, above all, Ending,
// how the previous attempt ended. When Ending is blank and c.Session names
// an ended session, that session's EndReason is copied into it now, so that
// clearing the run's error later (or resuming that session, which clears
// its end reason) cannot erase it from the briefing; when that session is
// still starting or running, RunQueued copies its end reason once it has
// ended (a crash before ready, or handoff.Coordinator.Recover after a restart). A zero Target means
// the workspace's configuration when the continuation runs. An automated
// continuation is not refused here even when nothing could be resumed
// now: a session may get its native id before it runs, and RunQueued
// applies the rule then. ID, State, Reason and the times are set here;
// the stored record is returned. Not idempotent: each call queues one more
// continuation. Errors: baton.ErrInvalid (bad input, with no side effect),
// ErrNoWorkspace, ErrArchived, ErrNoSession (c.Session
// unknown or of another workspace).
func (s *Service) QueueContinuation(ctx context.Context, c store.Continuation) (store.Continuation, error) {
	if err := s.checkContinue(ctx, c.Prompt, c.Task, c.Ending, c.Target); err != nil {
		return store.Continuation{}, err
	}
	now := s.clock.Now()
	c.ID = baton.ContinuationID(ids.New("cnt"))
	c.State, c.Reason = store.ContinuationQueued, ""
	c.CreatedAt, c.UpdatedAt = now, now
	if c.Target != (baton.EngineConfig{}) {
		c.Target = c.Target.Normalize()
	}
	out := c
	err := s.store.Update(ctx, func(tx store.Tx) error {
		out = c
		ws, err := workspace.GetWorkspace(tx, c.Workspace)
		if err != nil {
			return err
		}
		if ws.Archived {
			return ErrArchived
		}
		if c.Session != "" {
			prev, err := tx.GetSession(c.Session)
			if errors.Is(err, store.ErrNotFound) || (err == nil && prev.Workspace != ws.ID) {
				return baton.Errorf(workspace.ErrNoSession, "%s", c.Session)
			}
			if err != nil {
				return err
			}
			if strings.TrimSpace(out.Ending) == "" && prev.Status == store.SessionEnded {
				out.Ending = prev.EndReason
			}
		}
		return tx.PutContinuation(out)
	})
	if err != nil {
		return store.Continuation{}, err
	}
	return out, nil
}

// CancelContinuation cancels a queued continuation, so that RunQueued
// never runs it, or a started one, so that no missing-session retry
// follows its resume (a process already launched is not stopped: Stop
// does that). reason is stored for the user. Cancelling a cancelled
// continuation returns it unchanged. Errors: store.ErrNotFound,
// ErrContinuationSettled (it was refused).
func (s *Service) CancelContinuation(ctx context.Context, id baton.ContinuationID, reason string) (c store.Continuation, err error) {
	if ctx == nil {
		return store.Continuation{}, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if strings.TrimSpace(reason) == "" {
		reason = "cancelled"
	}
	err = s.store.Update(ctx, func(tx store.Tx) error {
		c, err = tx.GetContinuation(id)
		switch {
		case err != nil, c.State == store.ContinuationCancelled:
			return err
		case c.State == store.ContinuationRefused:
			return baton.Errorf(ErrContinuationSettled, "%s: %s", id, c.Reason)
		}
		c.State, c.Reason, c.UpdatedAt = store.ContinuationCancelled, reason, s.clock.Now()
		return tx.PutContinuation(c)
	})
	return c, err
}

// Continuations returns a workspace's continuations, oldest first.
// Errors: ErrNoWorkspace.
func (s *Service) Continuations(ctx context.Context, ws baton.WorkspaceID) (out []store.Continuation, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetWorkspace(tx, ws); err != nil {
			return err
		}
		out, err = tx.ListContinuations(ws)
		return err
	})
	return out, err
}

// RunQueuedOptions say how RunQueued briefs the fresh sessions it opens.
type RunQueuedOptions struct {
	// Events returns the previous conversation of a continuation's run (a
	// transcript source), given the continuation as queued; it is called
	// only when a briefing is built, and its sequence is ranged over once.
	// Nil means nothing was recorded.
	Events func(store.Continuation) iter.Seq[transcript.Event]
	// Limits bound the conversation replay (see recap.Conversation).
	Limits recap.Limits
	// Max is the most continuations to run; <= 0 means all.
	Max int
}

// QueuedStart is a continuation RunQueued started.
type QueuedStart struct {
	// Continuation is the record after the start: state started (or
	// cancelled meanwhile), Reason saying how it went.
	Continuation store.Continuation
	Result       ContinueResult
	// Err is the start's error (the engine's, or ctx's); nil once ready.
	Err error
}

// RunQueuedResult says what RunQueued did with each queued continuation.
type RunQueuedResult struct {
	Started []QueuedStart
	// Refused are automated continuations with nothing to resume, those
	// whose prompt is too long to follow a briefing, and those whose
	// workspace is gone or archived; each stores its Reason.
	Refused []store.Continuation
	// Deferred stay queued: their workspace is reserved or runs a process.
	Deferred []baton.ContinuationID
}
