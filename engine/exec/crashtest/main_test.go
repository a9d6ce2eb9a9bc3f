//go:build linux

// Package crashtest checks baton's guarantees with real agent processes:
// a host program built on store/badgerstore, engine/exec and
// handoff.Coordinator is SIGKILLed at every point of a session transfer and
// restarted on the same directory (Coordinator.Recover, then a retry of the
// interrupted transfer), and the native path is driven through the exec
// engine. Two coordinators on one store show the fence of two-phase
// starts: a node frozen between the commit that recorded its target's
// launch and the spawn never runs that agent once another node took the
// transfer over, and a reap that races an admission reaps again. It holds
// tests only.
//
// # Basics
//
//	go test -race ./engine/exec/crashtest
//
// builds testdata/agent (a stand-in agent CLI that forks a grandchild, both
// ignoring SIGTERM) and testdata/host (the host program), then runs them.
// BATON_CRASH_POINTS sets how many random kill moments TestCrashAnyPoint
// adds to its named ones (default 4), BATON_CRASH_SEED replays a run's
// random moments.
//
// # Caveats
//
// Linux only: the exec engine needs process groups, the parent-death signal
// and /proc. The tests find the processes of a run by an environment entry
// the host adds to every child (CRASHTEST_RUN=<its directory>), so they
// never touch other processes.
package crashtest

import (
	"testing"

	"github.com/batonhq/baton/engine/exec/internal/clitest"
)

// bins holds the programs TestMain builds: "agent" and "host".
var bins = map[string]string{}

func TestMain(m *testing.M) { clitest.Main(m, bins, "agent", "host") }
