package handoff

import (
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
)

// Supervise exposes a session service's supervisor (what a Coordinator
// launches and halts through) to this package's external tests.
func Supervise(s *session.Service) supervisor { return workspace.Of(s).(supervisor) }
