package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// A plan is how a run continues: resume its session byte for byte (the
// same native id, no briefing, the prompt alone) when session is set, else
// open a fresh session whose opening prompt is a briefing built from the
// record followed by the prompt. Its reason says why, in words a user can
// read.
type plan struct {
	session store.Session // the session to resume; zero for a fresh one
	reason  string
}

// resume reports whether p resumes a session.
func (p plan) resume() bool { return p.session.ID != "" }

// planFor applies the continuation rule given the implicit-resume choice
// s for target (ok false: none): resume whenever there is something to
// resume, else a fresh session briefed from the record, which an
// automated trigger (timer, wakeup, restart recovery without a user) may
// not start: it refuses, with an ErrResumeOnly error whose text is the
// plan's reason.
func planFor(s store.Session, ok bool, target baton.EngineConfig, automated bool) (plan, error) {
	if ok {
		return plan{s, fmt.Sprintf("resume session %s (native id %s) on %s", s.ID, s.NativeID, describe(target))}, nil
	}
	none := "no session with a native id on " + describe(target)
	if automated {
		err := baton.Errorf(ErrResumeOnly, "%s; only a user's message may start a fresh briefed session", none)
		return plan{reason: err.Error()}, err
	}
	return plan{reason: none + ": a fresh session briefed from the record"}, nil
}

// describe names an engine and account for a reason.
func describe(c baton.EngineConfig) string {
	c = c.Normalize()
	if c.Account == "" {
		return fmt.Sprintf("engine %q with the default account", c.Engine)
	}
	return fmt.Sprintf("engine %q with account %q", c.Engine, c.Account)
}

// Briefing says how the fresh session of a continuation is briefed.
type Briefing struct {
	// Events returns the previous conversation of a continuation's run (a
	// transcript source), given the continuation; it is called only when a
	// briefing is built, and its sequence is ranged over once. Nil, or a
	// nil sequence, means the transcript of the continuation's Session,
	// read from its engine when that keeps transcripts; without one the
	// briefing says the conversation was not included. Events of
	// report-only turns are left out. A trailing user message equal to the
	// Prompt (the host appended the continuation's own message already) is
	// left out, so a briefing never replays the message it precedes.
	Events func(store.Continuation) iter.Seq[transcript.Event]
	// Limits bound the conversation replay and name markers and secrets to
	// strip (see recap.Conversation).
	Limits recap.Limits
}

// ContinueResult says how a continuation ran.
type ContinueResult struct {
	// Continuation is, for RunQueued, the record as it then stands: State
	// started (or cancelled meanwhile), refused, or queued (deferred: its
	// workspace was reserved or ran a process), Reason saying how it went.
	// Continue leaves it zero.
	Continuation store.Continuation
	// Err is, for RunQueued, the start's error (the engine's, or ctx's);
	// nil once ready. Continue returns its error instead.
	Err error
	// Reason says how the run continues and why, in words a user can read:
	// a resume of a session with a native id on the target's engine and
	// account, else a fresh session briefed from the record (after a
	// missing-session retry, the fresh one: Retried is then true). For a
	// refusal it is the text of the ErrResumeOnly error.
	Reason string
	// Session is the session running the continuation, as recorded once the
	// engine confirmed readiness; the zero Session when none did.
	Session store.Session
	// Briefed reports that a fresh session was seeded with Briefing. The
	// briefing is delivery-only: record a note ("a fresh session was
	// seeded") in the transcript, and the user's words alone as the message.
	Briefed bool
	// Briefing is the text prepended to the prompt; "" unless Briefed.
	Briefing string
	// Prompt is the opening prompt handed to the engine (for a resume, the
	// request's Prompt, byte for byte).
	Prompt string
	// Missing is the session whose resume failed because the engine could
	// not find its native session (engine.ErrSessionMissing); it was rolled
	// back (order -1), so no default choice picks it again, while an
	// explicit Start of it still may. Retried reports that a fresh briefed
	// session was then started instead.
	Missing baton.SessionID
	Retried bool
}

// Continue continues a workspace's run. The rule: it resumes whenever
// there is something to resume (the session the implicit-resume rule picks
// for the target: a native id on the same engine and account, rolled-back
// sessions excluded, running first, then the highest activation order);
// otherwise it opens a fresh session briefed from the record ("nothing
// recorded" and "an id this engine or account cannot resolve" are the same
// case). An automated trigger may only resume. It runs through Start: a resume is Start{Session: id, Prompt: Prompt}, byte for byte; a
// fresh session is Start{Fresh: true} with the briefing, then Prompt, as
// its opening prompt. It waits (until ctx is done) for readiness. A resume
// that fails with engine.ErrSessionMissing rolls that session back and is
// retried once as a fresh briefed session, unless the trigger is
// automated or ctx is done; never after any other error (engine.ErrAuth
// included).
//
// c says what to continue, as QueueContinuation would store it (its ID,
// State, Reason and times are ignored): Workspace; Prompt, the new message
// (1..baton.MaxPromptBytes bytes), which a resume delivers alone, byte for
// byte, and a fresh session gets after the briefing; Task, the run's
// original task, and Ending, how the previous attempt ended, each quoted in
// a briefing (at most baton.MaxPromptBytes bytes); Session, the session the
// run last ran in, when known: with a blank Ending its end reason briefs a
// fresh session, so a run whose session crashed or was cut off is never
// briefed as if nothing happened; Target, the configuration to continue on
// (zero: the workspace's), whose engine and account decide whether a
// session can be resumed and which, unless the plan is a refusal, becomes
// the workspace's configuration before the start, so the next ordinary
// message resumes the session the continuation ran; Automated, a trigger
// without a user (a usage-limit timer, a wakeup, restart recovery), which
// may only resume. b says how a fresh session is briefed.
//
// Errors: baton.ErrInvalid (bad input; a Target the engine refuses; a
// prompt too long to follow the briefing), ErrNoWorkspace,
// ErrArchived, ErrNoSession (c.Session unknown or of another workspace),
// ErrWorkspaceBusy (a transfer is pending),
// ErrSessionRunning, ErrResumeOnly (automated and nothing to resume: the
// result's Reason says why, and nothing was written), ErrClosed, and
// whatever Start returns (the engine's errors, after which the session row
// is marked ended with the reason). Not safe to retry blindly after an
// engine error: the rows show what happened; safe to call again after a
// refusal that came before the engine (nothing was launched).
func (s *Service) Continue(ctx context.Context, req store.Continuation, b Briefing) (ContinueResult, error) {
	if err := s.checkContinue(ctx, req.Prompt, req.Task, req.Ending, req.Target); err != nil {
		return ContinueResult{}, err
	}
	if err := s.enter(); err != nil {
		return ContinueResult{}, err
	}
	defer s.wg.Done()
	if id, busy := s.Running(req.Workspace); busy {
		return ContinueResult{}, baton.Errorf(ErrSessionRunning, "session %s", id)
	}
	j := &contJob{c: req, b: b, ending: req.Ending}
	var p plan
	err := s.contUpdate(ctx, j, func(tx store.Tx) (err error) {
		ws, err := workspace.GetActive(tx, req.Workspace)
		if err != nil {
			return err
		}
		if err := workspace.CheckWritable(tx, ws.ID, baton.Token{}, 0); err != nil {
			return err
		}
		if err := j.endingFrom(tx); err != nil {
			return err
		}
		p, err = s.contPlanTx(tx, ws, req.Target, j) // a refusal writes nothing
		return err
	})
	if errors.Is(err, ErrResumeOnly) {
		return ContinueResult{Reason: p.reason}, err
	}
	if err != nil {
		return ContinueResult{}, err
	}
	return s.contExecute(ctx, j, p, func() bool { return true })
}

// checkContinue validates a continuation's inputs, with no side effect.
func (s *Service) checkContinue(ctx context.Context, prompt, task, ending string, target baton.EngineConfig) error {
	if ctx == nil {
		return baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := checkFields("prompt", prompt, "task", task, "ending", ending); err != nil || target == (baton.EngineConfig{}) {
		return err
	}
	return workspace.CheckConfig(s.engine, target)
}

// contJob is one continuation being carried out, by Continue or RunQueued:
// c as the caller gave it (or RunQueued read it), briefed as b says. Without
// events of the caller's, the engine's transcript of c.Session, the session
// continued, is replayed.
type contJob struct {
	c        store.Continuation
	b        Briefing
	ending   string // c.Ending, or the end reason of c.Session (endingFrom)
	briefing string // the briefing, once built
	opening  string // briefing, heading and message: a fresh session's prompt ("" until built)
}

// errNeedBriefing aborts a planning transaction that chose a fresh session
// before the briefing was built: the transcript is read outside any store
// transaction, then the transaction runs again.
var errNeedBriefing = errors.New("session: briefing needed")

// build builds the briefing and the opening prompt, once: from the
// caller's events, or else from the transcript of the session continued
// (the supervisor's Conversation, workspace.Replay). Errors: ctx's.
func (j *contJob) build(ctx context.Context, s *Service) error {
	if j.built() {
		return nil
	}
	in := recap.Input{Task: j.c.Task, Ending: j.ending}
	if j.b.Events != nil {
		in.Events = j.b.Events(j.c)
	}
	var seq iter.Seq2[transcript.Event, error]
	if in.Events == nil {
		var err error
		if seq, in.Omitted, err = s.sup().Conversation(ctx, j.c.Session); err != nil {
			return err
		}
	}
	// The record, replayed without a trailing echo of the new message, and
	// without the briefing's final line break.
	b, err := workspace.Replay(ctx, seq, in, func(in recap.Input) string {
		in.Events = withoutEcho(in.Events, j.c.Prompt)
		return strings.TrimRight(recap.Conversation(in, j.b.Limits), "\n")
	})
	if err != nil {
		return err
	}
	j.briefing, j.opening = b, opening(b, j.c.Prompt, j.c.Task)
	return nil
}

// built reports whether the briefing was built.
func (j *contJob) built() bool { return j.opening != "" }

// endingFrom fills j.ending with the end reason of j.c.Session, the session the
// continuation follows, when the caller gave no ending: a session still
// starting or running when the continuation was queued ends later (crashed
// before ready, or cut off by a restart and ended by handoff.Coordinator.Recover), and its
// ending must still brief the fresh session. It changes nothing once the
// briefing is built. Errors: ErrNoSession (unknown, or of another
// workspace), the store's.
func (j *contJob) endingFrom(tx store.Tx) (err error) {
	if !j.built() && strings.TrimSpace(j.ending) == "" {
		j.ending, err = endingOf(tx, j.c.Workspace, j.c.Session, j.ending)
	}
	return err
}

// endingOf returns ending or, when it is blank, the end reason of session
// id of workspace ws once it has ended. Errors: ErrNoSession (id unknown,
// or of another workspace), the store's.
func endingOf(tx store.Tx, ws baton.WorkspaceID, id baton.SessionID, ending string) (string, error) {
	if id == "" {
		return ending, nil
	}
	prev, err := sessionOf(tx, ws, id, "")
	if err == nil && strings.TrimSpace(ending) == "" && prev.Status == store.SessionEnded {
		ending = prev.EndReason
	}
	return ending, err
}

// tooLong reports an opening prompt Start would refuse.
func (j *contJob) tooLong() error {
	if len(j.opening) <= baton.MaxPromptBytes {
		return nil
	}
	return baton.Errorf(baton.ErrInvalid, "the briefing (%d bytes) and the prompt (%d bytes) exceed %d bytes: send a shorter message or lower the replay limits",
		len(j.briefing), len(j.c.Prompt), baton.MaxPromptBytes)
}

// contUpdate runs fn in a store transaction; when fn needs the briefing it
// is built outside the transaction and fn runs again.
func (s *Service) contUpdate(ctx context.Context, j *contJob, fn func(tx store.Tx) error) error {
	for {
		err := s.store.Update(ctx, fn)
		if !errors.Is(err, errNeedBriefing) || j.built() {
			return err
		}
		if err := j.build(ctx, s); err != nil {
			return err
		}
	}
}

// contPlanTx plans j inside tx and, unless the plan is a refusal, makes
// the resolved target (the workspace's configuration when target is zero)
// the workspace's configuration, so that Start opens a fresh session on it
// and the next ordinary message resumes the continuation's session, and
// gives it to the session a resume picks (which shares its engine and
// account): only those two rows change. It returns an ErrResumeOnly error
// for a refusal, having written nothing; errNeedBriefing when the plan is
// a fresh session and the briefing is not built yet; baton.ErrInvalid when
// the opening prompt would be too long.
func (s *Service) contPlanTx(tx store.Tx, ws store.Workspace, target baton.EngineConfig, j *contJob) (plan, error) {
	target = cmp.Or(target, ws.Config).Normalize()
	sess, ok, err := workspace.ImplicitResume(tx, ws, target)
	if err != nil {
		return plan{}, err
	}
	p, err := planFor(sess, ok, target, j.c.Automated)
	switch {
	case err != nil:
		return p, err
	case !p.resume() && !j.built():
		return p, errNeedBriefing
	case !p.resume():
		if err := j.tooLong(); err != nil {
			return p, err
		}
	}
	if ws.Config != target {
		ws.Config, ws.UpdatedAt = target, s.clock.Now()
		if err := tx.PutWorkspace(ws); err != nil {
			return p, err
		}
	}
	if !p.resume() || sess.Config == target {
		return p, nil
	}
	sess.Config = target // the row as this transaction read it
	return p, tx.PutSession(sess)
}

// contExecute starts the planned session and, when a resume finds its
// native session missing, rolls that session back and retries once fresh
// if allowed: not for an automated trigger, not once ctx is done, not when
// mayRetry says the continuation was cancelled meanwhile, and not when the
// opening prompt would be too long.
func (s *Service) contExecute(ctx context.Context, j *contJob, p plan, mayRetry func() bool) (ContinueResult, error) {
	res, err := s.contStart(ctx, j, p)
	if err == nil || !p.resume() || !errors.Is(err, engine.ErrSessionMissing) {
		return res, err
	}
	missing := p.session
	res.Missing = missing.ID
	if rerr := s.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		return workspace.Rollback(tx, missing.ID, "native session missing", s.clock.Now())
	}); rerr != nil {
		return res, errors.Join(err, rerr)
	}
	if j.c.Automated || ctx.Err() != nil || !mayRetry() || j.build(ctx, s) != nil || j.tooLong() != nil {
		return res, err
	}
	fresh := plan{reason: fmt.Sprintf("the engine could not find native session %s of session %s: a fresh session briefed from the record", missing.NativeID, missing.ID)}
	res, err = s.contStart(ctx, j, fresh)
	res.Retried, res.Missing = true, missing.ID
	return res, err
}

// contStart carries out one plan through Start.
func (s *Service) contStart(ctx context.Context, j *contJob, p plan) (ContinueResult, error) {
	res := ContinueResult{Reason: p.reason, Prompt: j.c.Prompt}
	req := TurnRequest{Workspace: j.c.Workspace, Prompt: j.c.Prompt}
	if p.resume() {
		req.Session = p.session.ID
	} else {
		req.Fresh, req.Prompt = true, j.opening
		res.Briefed, res.Briefing, res.Prompt = true, j.briefing, j.opening
	}
	out, err := s.Start(ctx, req)
	res.Session = out
	return res, err
}

// errContinuationSettled: CancelContinuation of a continuation that was
// refused; only queued and started continuations can be cancelled.
var errContinuationSettled = baton.NewError(baton.ErrConflict, "the continuation was refused already")

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
	c.Target = c.Target.Normalize() // zero stays zero: the workspace's configuration
	out := c
	err := s.store.Update(ctx, func(tx store.Tx) error {
		out = c
		ws, err := workspace.GetActive(tx, c.Workspace)
		if err != nil {
			return err
		}
		if out.Ending, err = endingOf(tx, ws.ID, c.Session, c.Ending); err != nil {
			return err
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
// baton.ErrConflict (it was refused).
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
			return baton.Errorf(errContinuationSettled, "%s: %s", id, c.Reason)
		}
		c.State, c.Reason, c.UpdatedAt = store.ContinuationCancelled, reason, s.clock.Now()
		return tx.PutContinuation(c)
	})
	return c, err
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
// does not stop the others: it is in its result's Err and its Reason. It
// runs at most max continuations (<= 0: all) and returns a result for each
// one it dealt with (see ContinueResult.Continuation), b briefing the fresh
// sessions it opens. Call it on a new Service after a restart, and again
// when capacity frees.
// Errors: baton.ErrInvalid (nil ctx), ErrClosed, ctx's error (checked
// between continuations), and the store's.
func (s *Service) RunQueued(ctx context.Context, b Briefing, max int) ([]ContinueResult, error) {
	var res []ContinueResult
	if ctx == nil {
		return res, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := s.enter(); err != nil {
		return res, err
	}
	defer s.wg.Done()
	var queued []store.Continuation
	if err := s.store.View(ctx, func(tx store.Tx) (err error) { queued, err = tx.QueuedContinuations(); return err }); err != nil {
		return res, err
	}
	if max > 0 && len(queued) > max {
		queued = queued[:max]
	}
	for _, c := range queued {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if _, busy := s.Running(c.Workspace); busy {
			res = append(res, ContinueResult{Continuation: c})
			continue
		}
		j := &contJob{c: c, b: b, ending: c.Ending}
		cur, p, err := s.claim(ctx, c.ID, j)
		if err != nil {
			return res, err
		}
		if cur.State != store.ContinuationStarted {
			if cur.ID != "" { // deferred or refused; else no longer queued
				res = append(res, ContinueResult{Continuation: cur})
			}
			continue
		}
		// A missing-session retry is made only while it is still started
		// (not cancelled).
		r, err := s.contExecute(ctx, j, p, func() bool {
			cur, err := s.continuation(ctx, c.ID)
			return err == nil && cur.State == store.ContinuationStarted
		})
		state, reason := store.ContinuationStarted, r.Reason
		deferred := err != nil && r.Missing == "" && notLaunched(err)
		switch {
		case deferred:
			// Nothing reached the engine: the continuation may run later.
			state, reason, r = store.ContinuationQueued, "deferred: "+err.Error(), ContinueResult{}
		case err != nil:
			reason += "; start failed: " + err.Error()
			r.Err = err
		}
		var uerr error
		if r.Continuation, uerr = s.settle(ctx, c.ID, state, reason); uerr != nil {
			return res, uerr
		}
		res = append(res, r)
		if deferred && errors.Is(err, ErrClosed) {
			return res, err
		}
	}
	return res, nil
}

// claim plans a queued continuation and, in one transaction, marks it
// refused with its reason, or started (with the workspace switched to its
// target), before anything is launched. It returns the continuation as it
// then stands: the zero one when it is no longer queued, a queued one when
// its workspace is reserved (deferred).
func (s *Service) claim(ctx context.Context, id baton.ContinuationID, j *contJob) (c store.Continuation, p plan, err error) {
	err = s.contUpdate(ctx, j, func(tx store.Tx) error {
		c, p = store.Continuation{}, plan{}
		cur, err := tx.GetContinuation(id)
		if err != nil || cur.State != store.ContinuationQueued {
			return err
		}
		c = cur
		mark := func(state store.ContinuationState, reason string) error {
			c.State, c.Reason, c.UpdatedAt = state, reason, s.clock.Now()
			return tx.PutContinuation(c)
		}
		ws, err := workspace.GetWorkspace(tx, c.Workspace)
		switch {
		case errors.Is(err, workspace.ErrNoWorkspace):
			return mark(store.ContinuationRefused, "the workspace no longer exists")
		case err != nil:
			return err
		case ws.Archived:
			return mark(store.ContinuationRefused, ErrArchived.Error())
		}
		if r, err := workspace.Reserved(tx, ws.ID); err != nil || r {
			return err
		}
		// The session it follows may have ended after it was queued: its
		// ending briefs the fresh session and is kept on the record.
		if err := j.endingFrom(tx); err != nil && !errors.Is(err, workspace.ErrNoSession) {
			return err
		}
		c.Ending = j.ending
		p, err = s.contPlanTx(tx, ws, c.Target, j)
		switch {
		case errors.Is(err, ErrResumeOnly):
			return mark(store.ContinuationRefused, p.reason)
		case errors.Is(err, baton.ErrInvalid):
			return mark(store.ContinuationRefused, err.Error())
		case err != nil:
			return err
		}
		return mark(store.ContinuationStarted, p.reason)
	})
	return c, p, err
}

// notLaunched reports errors Launch returns before calling the engine.
func notLaunched(err error) bool {
	return errors.Is(err, ErrSessionRunning) || errors.Is(err, workspace.ErrWorkspaceBusy) ||
		errors.Is(err, workspace.ErrStaleEpoch) || errors.Is(err, ErrClosed)
}

// settle moves a started continuation to state with reason and returns it
// as it then stands; a continuation cancelled meanwhile keeps its state. It
// writes even once ctx is done: the record must say what happened.
func (s *Service) settle(ctx context.Context, id baton.ContinuationID, state store.ContinuationState, reason string) (c store.Continuation, err error) {
	err = s.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		if c, err = tx.GetContinuation(id); err != nil || c.State != store.ContinuationStarted {
			return err
		}
		c.State, c.Reason, c.UpdatedAt = state, reason, s.clock.Now()
		return tx.PutContinuation(c)
	})
	return c, err
}

// continuation reads a continuation, even once ctx is done.
func (s *Service) continuation(ctx context.Context, id baton.ContinuationID) (c store.Continuation, err error) {
	err = s.store.View(context.WithoutCancel(ctx), func(tx store.Tx) error { c, err = tx.GetContinuation(id); return err })
	return c, err
}

// The text around the new message in a fresh session's opening prompt. The
// briefing tells the agent to read what follows it as history; this heading
// marks where the history stops and the message to act on starts.
const (
	newMessageHeading = "\n\n## New message\n\nEverything above is history. This is the message to act on now:\n\n"
	// taskStandIn replaces a new message that is the original task itself,
	// so that the task appears once.
	taskStandIn = "Carry on with the original task, quoted above."
)

// opening is a fresh session's opening prompt: the briefing, then the new
// message under its heading. A message that is the task, when the briefing
// quotes that task whole, is replaced by a line pointing at it, so the task
// appears once; otherwise the message is delivered as written.
func opening(briefing, prompt, task string) string {
	msg := prompt
	if t := strings.TrimSpace(task); t != "" && strings.TrimSpace(prompt) == t && strings.Contains(briefing, quoted(t)) {
		msg = taskStandIn
	}
	return briefing + newMessageHeading + msg
}

// quoted renders text as recap quotes it: each line behind "> ", an empty
// line as ">". If recap altered the text (clipped, redacted, stripped), the
// result is not found in the briefing and the message is sent in full.
func quoted(text string) string {
	var b strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if line != "" {
			line = " " + line
		}
		b.WriteString(">" + line + "\n")
	}
	return b.String()
}

// Bounds of what withoutEcho holds back: user text beyond the prompt's own
// length plus echoSlack cannot be its echo, nor can more than echoEvents
// events.
const (
	echoSlack  = 1024
	echoEvents = 256
)

// withoutEcho yields events except a trailing user message whose text (its
// chunks joined, surrounding white space ignored) is prompt: the host may
// have appended the continuation's own message before the briefing is
// built, and a briefing must never replay the message it precedes. It
// holds back at most the trailing user text that could be that echo, so
// its memory stays O(len(prompt)) whatever the transcript's length.
func withoutEcho(events iter.Seq[transcript.Event], prompt string) iter.Seq[transcript.Event] {
	want := strings.TrimSpace(prompt)
	if events == nil || want == "" {
		return events
	}
	limit := len(prompt) + echoSlack
	return func(yield func(transcript.Event) bool) {
		var held []transcript.Event
		size := 0 // bytes of user message text in held
		// flush yields held events, oldest first: all of them, or those
		// that cannot be part of the echo (beyond its bounds).
		flush := func(all bool) bool {
			for len(held) > 0 && (all || size > limit || len(held) > echoEvents) {
				ev := held[0]
				held = held[1:]
				if userText(ev) {
					size -= len(ev.Text)
				}
				if !yield(ev) {
					return false
				}
			}
			return true
		}
		for ev := range events {
			switch {
			case userText(ev):
				size += len(ev.Text)
			case ev.Kind == transcript.Message:
				// Another speaker's message: no trailing user message yet.
				if !flush(true) || !yield(ev) {
					return
				}
				continue
			case len(held) == 0:
				if !yield(ev) {
					return
				}
				continue
			}
			held = append(held, ev) // a user message, or a note or tool call inside the trailing run
			if !flush(false) {
				return
			}
		}
		held = held[:echoStart(held, want)]
		flush(true)
	}
}

func userText(ev transcript.Event) bool {
	return ev.Kind == transcript.Message && ev.Speaker == transcript.User
}

// echoStart returns the index of the user event of held where a suffix
// whose user text is want begins, or len(held) when there is none.
func echoStart(held []transcript.Event, want string) int {
	suffix := "" // the user text of held[i:]
	for i := len(held) - 1; i >= 0; i-- {
		if !userText(held[i]) {
			continue
		}
		suffix = held[i].Text + suffix
		switch t := strings.TrimSpace(suffix); {
		case t == want:
			return i
		case len(t) > len(want):
			return len(held)
		}
	}
	return len(held)
}

// transcriptOf returns the conversation of session sid as the engine it ran
// on recorded it: the Service's engine, or the one an engine.Registry
// names in the session's configuration, when that engine is an
// engine.Transcriber (see it for the sequence: lazy, bounded batches,
// every event marked with its turn, at most one error, last). Errors:
// baton.ErrInvalid for a nil context, ErrNoSession (unknown),
// engine.ErrNoTranscript (the engine keeps no transcripts, is not
// registered, or holds none of sid), the store's.
func (s *Service) transcriptOf(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	if ctx == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	var sess store.Session
	err := s.store.View(ctx, func(tx store.Tx) (err error) { sess, err = tx.GetSession(sid); return err })
	if errors.Is(err, store.ErrNotFound) {
		return nil, baton.Errorf(workspace.ErrNoSession, "%s", sid)
	}
	if err != nil {
		return nil, err
	}
	e, err := s.engineOf(sess.Config.Engine)
	if err != nil {
		return nil, baton.Errorf(engine.ErrNoTranscript, "%v (session %s)", err, sid)
	}
	t, ok := e.(engine.Transcriber)
	if !ok {
		return nil, baton.Errorf(engine.ErrNoTranscript, "engine %q keeps no transcripts", sess.Config.Engine)
	}
	return t.Transcript(ctx, sid)
}

// Reasons a briefing gives for a conversation it does not include.
const (
	omitNoTranscript = "no transcript of it is available here"
	omitNoSession    = "no previous session is known"
)

// Conversation returns what a briefing replays of session sid: its
// engine's transcript (transcriptOf), or, when none is to be had (no session
// named, an engine that keeps no transcripts, none of sid, a read that
// failed), a nil sequence and the reason a briefing gives for leaving the
// conversation out. Errors: ctx's, and only ctx's.
func (p *supervisor) Conversation(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], string, error) {
	s := p.svc()
	if sid == "" {
		return nil, omitNoSession, nil
	}
	seq, err := s.transcriptOf(ctx, sid)
	switch {
	case err == nil:
		return seq, "", nil
	case ctx != nil && ctx.Err() != nil:
		return nil, "", ctx.Err()
	case errors.Is(err, engine.ErrNoTranscript), errors.Is(err, workspace.ErrNoSession):
		return nil, omitNoTranscript, nil
	}
	s.log.Warn("a briefing leaves out a conversation whose transcript could not be opened",
		zap.String("session", string(sid)), zap.Error(err))
	return nil, workspace.OmitUnreadable + err.Error(), nil
}
