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
	prev, err := tx.GetSession(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && prev.Workspace != j.ws) {
		return baton.Errorf(workspace.ErrNoSession, "%s", id)
	}
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
