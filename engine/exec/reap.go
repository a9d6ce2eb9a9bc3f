package exec

import (
	"context"
	"syscall"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
)

// LaunchEnv is the environment variable that marks every process of a
// launch: the engine sets it to the launch id in the child's environment,
// every descendant inherits it, and ReapLaunch finds them by it.
const LaunchEnv = "BATON_LAUNCH_ID"

// Poll bounds of the wait for processes the engine did not spawn itself (an
// orphan has no parent that could be waited for, so the only confirmation
// is /proc).
const (
	pollMin = time.Millisecond
	pollMax = 20 * time.Millisecond
)

// ReapLaunch implements engine.Reaper: it stops every live process of
// launch id, whichever host spawned it (an orphan of a crashed host
// included), and confirms them gone. It finds them by the LaunchEnv entry
// of their environment and by the process groups those belong to; a pid is
// signalled only while its start time still matches, so a reused pid is
// never mistaken for the agent. They get SIGTERM, SIGKILL after
// Options.StopGrace, and count as gone once they no longer run (a zombie
// counts as gone).
//
// Outcomes: engine.Stopped (some ran and are gone), engine.NotRunning (none
// ran), engine.Timeout with ctx's error (ctx ended first), engine.Failed
// with an error (the process table could not be read, or a blank id).
// Safe to call more than once and concurrently.
func (e *Engine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	if id == "" {
		return engine.Failed, baton.Errorf(baton.ErrInvalid, "exec: blank launch id")
	}
	found, err := e.reapTree(ctx, launchMarker(id), 0, 0, e.opts.StopGrace)
	switch {
	case err != nil && ctx.Err() != nil:
		return engine.Timeout, err
	case err != nil:
		return engine.Failed, baton.Errorf(baton.ErrUnavailable, "exec: reap %s: %v", id, err)
	case found:
		return engine.Stopped, nil
	}
	return engine.NotRunning, nil
}

func launchMarker(id baton.LaunchID) []byte { return []byte(LaunchEnv + "=" + string(id)) }

// reapTree stops every live process of a launch (see scan for which count)
// and waits until none runs: SIGTERM first, SIGKILL after grace (zero:
// SIGKILL at once). It reports whether any ran. Each round rescans, so a
// process forked meanwhile is caught too. An error is ctx's or the
// process table's.
func (e *Engine) reapTree(ctx context.Context, marker []byte, pgid int, minStart uint64, grace time.Duration) (bool, error) {
	targets, err := scan(marker, pgid, minStart)
	if err != nil || len(targets) == 0 {
		return false, err
	}
	if grace > 0 {
		e.signalAll(targets, pgid, syscall.SIGTERM)
		t := e.opts.Clock.NewTimer(grace)
		gone, err := e.waitGone(ctx, targets, t.C())
		t.Stop()
		if err != nil {
			return true, err
		}
		if gone {
			// Those are gone; a final scan below catches late forks.
			if targets, err = scan(marker, pgid, minStart); err != nil || len(targets) == 0 {
				return true, err
			}
		}
	}
	for {
		e.signalAll(targets, pgid, syscall.SIGKILL)
		if _, err := e.waitGone(ctx, targets, nil); err != nil {
			return true, err
		}
		if targets, err = scan(marker, pgid, minStart); err != nil || len(targets) == 0 {
			return true, err
		}
	}
}

func (e *Engine) signalAll(targets []procStat, pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = signalGroup(pgid, sig)
	}
	for _, t := range targets {
		signal(t, sig)
	}
}

// waitGone polls until none of targets runs (true), until stop fires
// (false), or until ctx ends (its error).
func (e *Engine) waitGone(ctx context.Context, targets []procStat, stop <-chan time.Time) (bool, error) {
	d := pollMin
	tm := time.NewTimer(0)
	defer tm.Stop()
	<-tm.C
	for {
		for len(targets) > 0 && !alive(targets[0]) {
			targets = targets[1:]
		}
		if len(targets) == 0 {
			return true, nil
		}
		tm.Reset(d)
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-stop:
			return false, nil
		case <-tm.C:
		}
		d = min(2*d, pollMax)
	}
}
