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
			prev, err := sessionOf(tx, ws.ID, c.Session, "")
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
func (s *Service) Continuations(ctx context.Context, ws baton.WorkspaceID) ([]store.Continuation, error) {
	return list(ctx, s, ws, store.Tx.ListContinuations)
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

// RunQueued runs the queued continuations, oldest first, each with its
// stored inputs and the continuation rule (see Continue) applied now: the check is made
// when a continuation runs, not only when it was queued, and an automated
// one that could only start fresh is refused with its Reason stored. Each
// is marked started or refused in the transaction that records its start,
// before any launch, so a crash never runs one twice (it may leave one
// started that never launched: at most once). One whose workspace is
// reserved or runs a process stays queued (Deferred), as does one whose
// launch was refused before reaching the engine. Each start waits (until
// ctx is done) for readiness before the next one; an engine failure of one
// does not stop the others: it is in its QueuedStart and its Reason. Call
// it on a new Service after a restart, and again when capacity frees.
// Errors: baton.ErrInvalid (nil ctx), ErrClosed, ctx's error (checked
// between continuations), and the store's.
func (s *Service) RunQueued(ctx context.Context, opts RunQueuedOptions) (RunQueuedResult, error) {
	var res RunQueuedResult
	if ctx == nil {
		return res, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := s.enter(); err != nil {
		return res, err
	}
	defer s.wg.Done()
	var queued []store.Continuation
	if err := s.store.View(ctx, func(tx store.Tx) (err error) {
		queued, err = tx.QueuedContinuations()
		return err
	}); err != nil {
		return res, err
	}
	if opts.Max > 0 && len(queued) > opts.Max {
		queued = queued[:opts.Max]
	}
	for _, c := range queued {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if _, busy := s.Running(c.Workspace); busy {
			res.Deferred = append(res.Deferred, c.ID)
			continue
		}
		j := &contJob{ws: c.Workspace, prompt: c.Prompt, task: c.Task, ending: c.Ending, automated: c.Automated, limits: opts.Limits, prev: c.Session}
		if opts.Events != nil {
			j.events = func() iter.Seq[transcript.Event] { return opts.Events(c) }
		}
		out, cur, p, err := s.claim(ctx, c.ID, j)
		if err != nil {
			return res, err
		}
		switch out {
		case claimDeferred:
			res.Deferred = append(res.Deferred, c.ID)
			continue
		case claimRefused:
			res.Refused = append(res.Refused, cur)
			continue
		case claimGone:
			continue
		}
		r, err := s.contExecute(ctx, j, p, func() bool { return s.stillStarted(ctx, c.ID) })
		if err != nil && r.Missing == "" && notLaunched(err) {
			// Nothing reached the engine: the continuation may run later.
			if uerr := s.settle(ctx, c.ID, store.ContinuationQueued, "deferred: "+err.Error()); uerr != nil {
				return res, uerr
			}
			res.Deferred = append(res.Deferred, c.ID)
			if errors.Is(err, ErrClosed) {
				return res, err
			}
			continue
		}
		reason := r.Reason
		if err != nil {
			reason += "; start failed: " + err.Error()
		}
		if uerr := s.settle(ctx, c.ID, store.ContinuationStarted, reason); uerr != nil {
			return res, uerr
		}
		final, uerr := s.continuation(ctx, c.ID)
		if uerr != nil {
			return res, uerr
		}
		res.Started = append(res.Started, QueuedStart{Continuation: final, Result: r, Err: err})
	}
	return res, nil
}

// claimOutcome is what claim did with a queued continuation.
type claimOutcome int

const (
	claimGone     claimOutcome = iota // no longer queued: nothing to do
	claimDeferred                     // its workspace is reserved: left queued
	claimRefused                      // refused, with its reason stored
	claimStarted                      // marked started, its session recorded as running
)

// claim plans a queued continuation and, in one transaction, marks it
// refused with its reason, or started (with the workspace switched to its
// target), before anything is launched.
func (s *Service) claim(ctx context.Context, id baton.ContinuationID, j *contJob) (out claimOutcome, c store.Continuation, p plan, err error) {
	err = s.contUpdate(ctx, j, func(tx store.Tx) error {
		out, p = claimGone, plan{}
		cur, err := tx.GetContinuation(id)
		if err != nil || cur.State != store.ContinuationQueued {
			return err
		}
		c = cur
		mark := func(o claimOutcome, state store.ContinuationState, reason string) error {
			out = o
			c.State, c.Reason, c.UpdatedAt = state, reason, s.clock.Now()
			return tx.PutContinuation(c)
		}
		ws, err := workspace.GetWorkspace(tx, c.Workspace)
		if errors.Is(err, workspace.ErrNoWorkspace) {
			return mark(claimRefused, store.ContinuationRefused, "the workspace no longer exists")
		}
		if err != nil {
			return err
		}
		if ws.Archived {
			return mark(claimRefused, store.ContinuationRefused, ErrArchived.Error())
		}
		if r, err := workspace.Reserved(tx, ws.ID); err != nil || r {
			out = claimDeferred
			return err
		}
		// The session it follows may have ended after it was queued: its
		// ending briefs the fresh session and is kept on the record.
		if err := j.endingFrom(tx, c.Session); err != nil && !errors.Is(err, workspace.ErrNoSession) {
			return err
		}
		c.Ending = j.ending
		p, err = s.contPlanTx(tx, ws, c.Target, j)
		switch {
		case errors.Is(err, ErrResumeOnly):
			return mark(claimRefused, store.ContinuationRefused, p.reason)
		case errors.Is(err, baton.ErrInvalid):
			return mark(claimRefused, store.ContinuationRefused, err.Error())
		case err != nil:
			return err
		}
		return mark(claimStarted, store.ContinuationStarted, p.reason)
	})
	return out, c, p, err
}

// notLaunched reports errors Launch returns before calling the engine.
func notLaunched(err error) bool {
	return errors.Is(err, ErrSessionRunning) || errors.Is(err, workspace.ErrWorkspaceBusy) ||
		errors.Is(err, workspace.ErrStaleEpoch) || errors.Is(err, ErrClosed)
}

// settle moves a started continuation to state with reason; a continuation
// cancelled meanwhile keeps its state. It writes even once ctx is done: the
// record must say what happened.
func (s *Service) settle(ctx context.Context, id baton.ContinuationID, state store.ContinuationState, reason string) error {
	return s.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		c, err := tx.GetContinuation(id)
		if err != nil || c.State != store.ContinuationStarted {
			return err
		}
		c.State, c.Reason, c.UpdatedAt = state, reason, s.clock.Now()
		return tx.PutContinuation(c)
	})
}

// stillStarted reports whether continuation id is still started (not
// cancelled): a missing-session retry is made only then.
func (s *Service) stillStarted(ctx context.Context, id baton.ContinuationID) bool {
	c, err := s.continuation(ctx, id)
	return err == nil && c.State == store.ContinuationStarted
}

// continuation reads a continuation, even once ctx is done.
func (s *Service) continuation(ctx context.Context, id baton.ContinuationID) (c store.Continuation, err error) {
	err = s.store.View(context.WithoutCancel(ctx), func(tx store.Tx) error { c, err = tx.GetContinuation(id); return err })
	return c, err
}
