package session

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/batonhq/baton"
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
