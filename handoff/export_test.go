package handoff

import (
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// NewOn is New over a session service of its own: session.New(st,
// engines, so), then New(that service, engines, opts...).
func NewOn(st store.Store, engines engine.Registry, so session.Options, opts ...Option) (*Coordinator, error) {
	svc, err := session.New(st, engines, so)
	if err != nil {
		return nil, err
	}
	return New(svc, engines, opts...)
}

// Supervise exposes a session service's supervisor (what a Coordinator
// launches and halts through) to this package's external tests.
func Supervise(s *session.Service) supervisor { return workspace.Of(s).(supervisor) }

// ReportPrompt is the opening prompt of the source's report-only turn.
const ReportPrompt = reportPrompt

// Fingerprint is r's idempotency fingerprint.
func Fingerprint(r Request) string { return r.fingerprint() }

// ReportCounts returns how many report submissions c refused for a wrong
// token (rejected) and after the handoff already held its report (late).
func ReportCounts(c *Coordinator) (rejected, late uint64) {
	return c.rejected.Load(), c.lateReports.Load()
}

// InstanceID returns the id c writes in reservation leases.
func InstanceID(c *Coordinator) string { return c.id }
