package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// A plan is how a run continues: resume its session byte for byte (the
// same native id, no briefing, the prompt alone), open a fresh session
// whose opening prompt is a briefing built from the record followed by
// the prompt, or refuse (an automated trigger may only resume, and there
// is nothing to resume). Its reason says why, in words a user can read;
// a refusal's is the text of the ErrResumeOnly error.
type plan struct {
	action  planAction
	session store.Session // the session to resume (planResume only)
	reason  string
}

type planAction string

const (
	planResume planAction = "resume"
	planFresh  planAction = "fresh"
	planRefuse planAction = "refuse"
)

// planFor applies the continuation rule given the implicit-resume choice
// s for target (ok false: none): resume whenever there is something to
// resume, else a fresh session briefed from the record, which an
// automated trigger (timer, wakeup, restart recovery without a user) may
// not start: it refuses, with the refusal's error.
func planFor(s store.Session, ok bool, target baton.EngineConfig, automated bool) (plan, error) {
	if ok {
		return plan{planResume, s, fmt.Sprintf("resume session %s (native id %s) on %s", s.ID, s.NativeID, describe(target))}, nil
	}
	none := "no session with a native id on " + describe(target)
	if automated {
		err := baton.Errorf(ErrResumeOnly, "%s; only a user's message may start a fresh briefed session", none)
		return plan{action: planRefuse, reason: err.Error()}, err
	}
	return plan{action: planFresh, reason: none + ": a fresh session briefed from the record"}, nil
}

// describe names an engine and account for a reason.
func describe(c baton.EngineConfig) string {
	c = c.Normalize()
	if c.Account == "" {
		return fmt.Sprintf("engine %q with the default account", c.Engine)
	}
	return fmt.Sprintf("engine %q with account %q", c.Engine, c.Account)
}

// ContinueRequest asks to continue a workspace's run.
type ContinueRequest struct {
	Workspace baton.WorkspaceID
	// Prompt is the new message, 1..baton.MaxPromptBytes bytes. A resume delivers
	// it alone, byte for byte; a fresh session gets it after the briefing.
	Prompt string
	// Task is the run's original task, quoted once in a briefing (at most
	// baton.MaxPromptBytes bytes).
	Task string
	// Ending says how the previous attempt ended, quoted in a briefing when
	// not blank (at most baton.MaxPromptBytes bytes).
	Ending string
	// Session names the session the run last ran in, when known. With a
	// blank Ending, that session's end reason (read when the continuation
	// is planned) briefs a fresh session: a run whose session crashed or
	// was cut off by a restart is never briefed as if nothing happened.
	Session baton.SessionID
	// Target is the configuration to continue on; the zero value means the
	// workspace's. Its engine and account decide whether a session can be
	// resumed; a resumed session then runs with all of Target (model,
	// effort, permission mode). Unless the plan is a refusal, Target becomes
	// the workspace's configuration before the start, so the next ordinary
	// message resumes the session the continuation ran.
	Target baton.EngineConfig
	// Automated marks a trigger without a user (a usage-limit timer, a
	// wakeup, restart recovery): it may only resume.
	Automated bool
	// Events yields the previous conversation (a transcript source). It is
	// ranged over at most once, and only when a briefing is built. Nil
	// means the transcript of Session, read from its engine when that is an
	// engine.Transcriber (Service.Transcript); without one the briefing
	// says the conversation was not included. Events of report-only turns
	// are left out. A trailing user message equal to Prompt (the
	// host appended the continuation's own message already) is left out, so
	// a briefing never replays the message it precedes.
	Events iter.Seq[transcript.Event]
	// Limits bound the conversation replay and name markers and secrets to
	// strip (see recap.Conversation).
	Limits recap.Limits
}

// ContinueResult says how a continuation ran.
type ContinueResult struct {
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
// Errors: baton.ErrInvalid (bad input; a Target the engine refuses; a
// prompt too long to follow the briefing), ErrNoWorkspace,
// ErrArchived, ErrNoSession (req.Session unknown or of another workspace),
// ErrWorkspaceBusy (a transfer is pending),
// ErrSessionRunning, ErrResumeOnly (automated and nothing to resume: the
// result's Reason says why, and nothing was written), ErrClosed, and
// whatever Start returns (the engine's errors, after which the session row
// is marked ended with the reason). Not safe to retry blindly after an
// engine error: the rows show what happened; safe to call again after a
// refusal that came before the engine (nothing was launched).
func (s *Service) Continue(ctx context.Context, req ContinueRequest) (ContinueResult, error) {
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
	j := &contJob{ws: req.Workspace, prompt: req.Prompt, task: req.Task, ending: req.Ending, automated: req.Automated, limits: req.Limits,
		events: func() iter.Seq[transcript.Event] { return req.Events }, prev: req.Session}
	var p plan
	var refusal error
	err := s.contUpdate(ctx, j, func(tx store.Tx) error {
		refusal = nil
		ws, err := workspace.GetWorkspace(tx, req.Workspace)
		if err != nil {
			return err
		}
		if ws.Archived {
			return ErrArchived
		}
		if err := workspace.CheckWritable(tx, ws.ID, baton.Token{}, 0); err != nil {
			return err
		}
		if err := j.endingFrom(tx, req.Session); err != nil {
			return err
		}
		p, err = s.contPlanTx(tx, ws, req.Target, j)
		if errors.Is(err, ErrResumeOnly) {
			refusal = err // nothing was written: commit the empty transaction
			return nil
		}
		return err
	})
	if err != nil {
		return ContinueResult{}, err
	}
	if refusal != nil {
		return ContinueResult{Reason: p.reason}, refusal
	}
	return s.contExecute(ctx, j, p, func() bool { return true })
}

// checkContinue validates a continuation's inputs, with no side effect.
func (s *Service) checkContinue(ctx context.Context, prompt, task, ending string, target baton.EngineConfig) error {
	if ctx == nil {
		return baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := baton.CheckField(baton.FieldPrompt, prompt); err != nil {
		return err
	}
	if err := baton.CheckField(baton.FieldTask, task); err != nil {
		return err
	}
	if err := baton.CheckField(baton.FieldEnding, ending); err != nil {
		return err
	}
	if target == (baton.EngineConfig{}) {
		return nil
	}
	return workspace.CheckConfig(s.engine, target)
}

// contJob is one continuation being carried out, by Continue or RunQueued.
type contJob struct {
	ws                   baton.WorkspaceID
	prompt, task, ending string
	automated            bool
	events               func() iter.Seq[transcript.Event] // called once, when briefing
	// prev is the session continued: without events of the caller's, its
	// engine's transcript is replayed.
	prev   baton.SessionID
	limits recap.Limits

	built    bool   // the briefing was built
	briefing string // the briefing, once built
	opening  string // briefing, heading and message: a fresh session's prompt
}

// errNeedBriefing aborts a planning transaction that chose a fresh session
// before the briefing was built: the transcript is read outside any store
// transaction, then the transaction runs again.
var errNeedBriefing = errors.New("session: briefing needed")

// build builds the briefing and the opening prompt, once: from the
// caller's events, or else from the transcript of the session continued
// (the supervisor's Conversation, workspace.Replay). Errors: ctx's.
func (j *contJob) build(ctx context.Context, s *Service) error {
	if j.built {
		return nil
	}
	in := recap.Input{Task: j.task, Ending: j.ending}
	if j.events != nil {
		in.Events = j.events()
	}
	var seq iter.Seq2[transcript.Event, error]
	if in.Events == nil {
		var err error
		if seq, in.Omitted, err = s.sup().Conversation(ctx, j.prev); err != nil {
			return err
		}
	}
	b, err := workspace.Replay(ctx, seq, in, func(in recap.Input) string { return briefing(in, j.prompt, j.limits) })
	if err != nil {
		return err
	}
	j.briefing = b
	j.opening = opening(j.briefing, j.prompt, j.task)
	j.built = true
	return nil
}

// endingFrom fills j.ending with the end reason of session id, the session
// the continuation follows, when the caller gave no ending: a session still
// starting or running when the continuation was queued ends later (crashed
// before ready, or cut off by a restart and ended by handoff.Coordinator.Recover), and its
// ending must still brief the fresh session. It changes nothing once the
// briefing is built. Errors: ErrNoSession (unknown, or of another
// workspace), the store's.
func (j *contJob) endingFrom(tx store.Tx, id baton.SessionID) error {
	if id == "" || strings.TrimSpace(j.ending) != "" || j.built {
		return nil
	}
	prev, err := sessionOf(tx, j.ws, id, "")
	if err != nil {
		return err
	}
	if prev.Status == store.SessionEnded {
		j.ending = prev.EndReason
	}
	return nil
}

// tooLong reports an opening prompt Start would refuse.
func (j *contJob) tooLong() error {
	if len(j.opening) <= baton.MaxPromptBytes {
		return nil
	}
	return baton.Errorf(baton.ErrInvalid, "the briefing (%d bytes) and the prompt (%d bytes) exceed %d bytes: send a shorter message or lower the replay limits",
		len(j.briefing), len(j.prompt), baton.MaxPromptBytes)
}

// contUpdate runs fn in a store transaction; when fn needs the briefing it
// is built outside the transaction and fn runs again.
func (s *Service) contUpdate(ctx context.Context, j *contJob, fn func(tx store.Tx) error) error {
	for {
		err := s.store.Update(ctx, fn)
		if !errors.Is(err, errNeedBriefing) || j.built {
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
	if target == (baton.EngineConfig{}) {
		target = ws.Config
	}
	target = target.Normalize()
	sess, ok, err := workspace.ImplicitResume(tx, ws, target)
	if err != nil {
		return plan{}, err
	}
	p, err := planFor(sess, ok, target, j.automated)
	switch {
	case err != nil:
		return p, err
	case p.action == planFresh && !j.built:
		return p, errNeedBriefing
	case p.action == planFresh:
		if err := j.tooLong(); err != nil {
			return p, err
		}
	}
	now := s.clock.Now()
	if ws.Config != target {
		ws.Config, ws.UpdatedAt = target, now
		if err := tx.PutWorkspace(ws); err != nil {
			return p, err
		}
	}
	if p.action != planResume || p.session.Config == target {
		return p, nil
	}
	sess, err = tx.GetSession(p.session.ID)
	if err != nil {
		return p, err
	}
	sess.Config = target
	return p, tx.PutSession(sess)
}

// contExecute starts the planned session and, when a resume finds its
// native session missing, rolls that session back and retries once fresh
// if allowed: not for an automated trigger, not once ctx is done, not when
// mayRetry says the continuation was cancelled meanwhile, and not when the
// opening prompt would be too long.
func (s *Service) contExecute(ctx context.Context, j *contJob, p plan, mayRetry func() bool) (ContinueResult, error) {
	res, err := s.contStart(ctx, j, p)
	if err == nil || p.action != planResume || !errors.Is(err, engine.ErrSessionMissing) {
		return res, err
	}
	missing := p.session
	res.Missing = missing.ID
	if rerr := s.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error {
		return workspace.Rollback(tx, missing.ID, "native session missing", s.clock.Now())
	}); rerr != nil {
		return res, errors.Join(err, rerr)
	}
	if j.automated || ctx.Err() != nil || !mayRetry() {
		return res, err
	}
	if j.build(ctx, s) != nil || j.tooLong() != nil {
		return res, err
	}
	fresh := plan{action: planFresh, reason: fmt.Sprintf("the engine could not find native session %s of session %s: a fresh session briefed from the record", missing.NativeID, missing.ID)}
	res, err = s.contStart(ctx, j, fresh)
	res.Retried, res.Missing = true, missing.ID
	return res, err
}

// contStart carries out one plan through Start.
func (s *Service) contStart(ctx context.Context, j *contJob, p plan) (ContinueResult, error) {
	res := ContinueResult{Reason: p.reason, Prompt: j.prompt}
	req := TurnRequest{Workspace: j.ws, Prompt: j.prompt}
	if p.action == planResume {
		req.Session = p.session.ID
	} else {
		req.Fresh, req.Prompt = true, j.opening
		res.Briefed, res.Briefing, res.Prompt = true, j.briefing, j.opening
	}
	out, err := s.Start(ctx, req)
	res.Session = out
	return res, err
}
