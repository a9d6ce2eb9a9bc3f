package session

import (
	"context"
)

import ()

// Supervise exposes a Service's supervisor (its launches, halts, reaps
// and restart sweep, which package handoff reaches through a
// workspace.Link) to this package's external tests.
func Supervise(s *Service) *supervisor { return s.sup() }

// Reconciled is what the restart sweep of a Service did, for the tests.
type Reconciled struct {
	ReapResult
	EndedSessions int
}

// Reconcile runs s's restart sweep (what handoff.Coordinator.Recover runs
// first).
func Reconcile(ctx context.Context, s *Service) (Reconciled, error) {
	r, n, err := s.sup().Reconcile(ctx)
	return Reconciled{r, n}, err
}
