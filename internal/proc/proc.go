// Package proc holds what the subprocess engines (engine/exec, engine/acp)
// share about the processes of a launch: the process group and parent-death
// signal a child is spawned with, the environment entry that marks every
// process of a launch, the /proc scan that finds them after their host died,
// the confirmed reap of them all, and the held start of a two-phase launch;
// and the bookkeeping both engines keep alike: Child, the process of one
// launch that each engine's process type embeds (spawn, readiness, exit,
// the accessors of engine.Process), and Launches, an engine's running
// launches and its Close.
package proc

import (
	"context"
	"errors"
	"syscall"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
)

// ErrUnsupported: process groups, the parent-death signal and /proc are
// missing (the system is not Linux).
var ErrUnsupported = errors.New("process groups, the parent-death signal and /proc are needed (Linux only)")

// LaunchEnv is the environment variable that marks every process of a
// launch: an engine sets it to the launch id in the child's environment,
// every descendant inherits it, and Reap finds them by it.
const LaunchEnv = "BATON_LAUNCH_ID"

// Marker is the environment entry of launch id (LaunchEnv=id).
func Marker(id baton.LaunchID) []byte { return []byte(LaunchEnv + "=" + string(id)) }

// The held start of a two-phase launch: HeldShell runs HeldScript, which
// reads one line from descriptor 3 and runs the agent ("$@", the resolved
// command and its arguments) only if the line is ReleaseWord; end of file
// (the host closed the gate, or died) ends it. The exec replaces the shell
// and keeps its pid, process group and environment.
const (
	HeldShell   = "/bin/sh"
	HeldScript  = `IFS= read -r baton_gate <&3; exec 3<&-; [ "$baton_gate" = run ] && exec "$@"; exit 125`
	HeldArgv0   = "baton-held"
	ReleaseWord = "run\n"
)

// Stat is what baton reads from /proc/<pid>/stat.
type Stat struct {
	pid   int
	state byte
	pgid  int
	Start uint64 // clock ticks after boot: with pid, names one process
}

// PID is the process's id.
func (s Stat) PID() int { return s.pid }

// Gone reports whether the process no longer runs code: a zombie or a dead
// task counts as gone.
func (s Stat) Gone() bool { return s.state == 'Z' || s.state == 'X' || s.state == 'x' }

// Poll bounds of the wait for processes the engine did not spawn itself (an
// orphan has no parent that could be waited for, so the only confirmation
// is /proc).
const (
	pollMin = time.Millisecond
	pollMax = 20 * time.Millisecond
)

// Reap stops every live process of a launch (see Scan for which count)
// and waits until none runs: SIGTERM first, SIGKILL after grace on clk
// (zero: SIGKILL at once). It reports whether any ran. Each round rescans,
// so a process forked meanwhile is caught too. An error is ctx's or the
// process table's.
func Reap(ctx context.Context, clk clock.Clock, marker []byte, pgid int, minStart uint64, grace time.Duration) (bool, error) {
	targets, err := Scan(marker, pgid, minStart)
	if err != nil || len(targets) == 0 {
		return false, err
	}
	// The first round sends SIGTERM and waits the grace at most; every
	// later one (late forks, or what the grace left running) SIGKILL.
	sig, stop := syscall.SIGKILL, (<-chan time.Time)(nil)
	if grace > 0 {
		t := clk.NewTimer(grace)
		defer t.Stop()
		sig, stop = syscall.SIGTERM, t.C()
	}
	for {
		signalAll(targets, pgid, sig)
		if err := waitGone(ctx, targets, stop); err != nil {
			if sig != syscall.SIGKILL {
				// ctx ended during the grace: not confirmed, but killed.
				signalAll(targets, pgid, syscall.SIGKILL)
			}
			return true, err
		}
		sig, stop = syscall.SIGKILL, nil
		if targets, err = Scan(marker, pgid, minStart); err != nil || len(targets) == 0 {
			return true, err
		}
	}
}

// signalAll signals targets and group pgid (none when pgid is 0).
func signalAll(targets []Stat, pgid int, sig syscall.Signal) {
	_ = SignalGroup(pgid, sig)
	for _, t := range targets {
		Signal(t, sig)
	}
}

// waitGone polls until none of targets runs or stop fires (nil), or until
// ctx ends (its error).
func waitGone(ctx context.Context, targets []Stat, stop <-chan time.Time) error {
	for d := pollMin; ; d = min(2*d, pollMax) {
		for len(targets) > 0 && !Alive(targets[0]) {
			targets = targets[1:]
		}
		if len(targets) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			return nil
		case <-time.After(d):
		}
	}
}
