package exec

import (
	"context"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
)

// launchEnv is the environment variable that marks every process of a
// launch: the engine sets it to the launch id in the child's environment,
// every descendant inherits it, and ReapLaunch finds them by it.
const launchEnv = proc.LaunchEnv

// ReapLaunch implements engine.Reaper: it stops every live process of
// launch id, whichever host spawned it (an orphan of a crashed host
// included), and confirms them gone. It finds them by the BATON_LAUNCH_ID entry
// of their environment and by the process groups those belong to; a pid is
// signalled only while its start time still matches, so a reused pid is
// never mistaken for the agent. They get SIGTERM, SIGKILL after
// Options.StopGrace (or as soon as ctx ends, whichever comes first), and
// count as gone once they no longer run (a zombie counts as gone).
//
// Outcomes: engine.Stopped (some ran and are gone), engine.NotRunning (none
// ran), engine.Timeout with ctx's error (ctx ended first), engine.Failed
// with an error (the process table could not be read, or a blank id).
// Safe to call more than once and concurrently.
func (e *Engine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	return proc.ReapLaunch(ctx, "exec", e.opts.Clock, id, e.opts.StopGrace)
}
