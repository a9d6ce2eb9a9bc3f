package session

import (
	"context"
	"iter"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// Supervise exposes a Service's supervisor (its launches, halts, reaps
// and restart sweep, which package handoff reaches through a
// workspace.Link) to this package's external tests.
func Supervise(s *Service) *supervisor { return s.sup() }

// Transcript is the conversation of session sid a briefing replays, as
// its engine recorded it, for the tests.
func Transcript(ctx context.Context, s *Service, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	return s.transcriptOf(ctx, sid)
}

// Reconciled is what the restart sweep of a Service did, for the tests.
type Reconciled struct {
	workspace.ReapResult
	EndedSessions int
}

// Reconcile runs s's restart sweep (what handoff.Coordinator.Recover runs
// first).
func Reconcile(ctx context.Context, s *Service) (Reconciled, error) {
	r, n, err := s.sup().Reconcile(ctx)
	return Reconciled{r, n}, err
}

// Plan is how a run continues, for the tests: Action "resume", "fresh" or
// "refuse", the session a resume picks, and the reason given.
type Plan struct {
	Action  string
	Session store.Session
	Reason  string
}

// PlanContinue applies the continuation rule (Continue's) to a workspace's
// sessions.
func PlanContinue(sessions []store.Session, target baton.EngineConfig, automated bool) Plan {
	s, ok := workspace.SelectImplicitResume(sessions, target)
	p, err := planFor(s, ok, target, automated)
	action := "fresh"
	switch {
	case err != nil:
		action = "refuse"
	case p.resume():
		action = "resume"
	}
	return Plan{action, p.session, p.reason}
}
