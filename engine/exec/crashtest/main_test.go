//go:build linux

// Package crashtest checks baton's guarantees with real agent processes:
// a host program built on store/badgerstore, engine/exec and
// handoff.Coordinator is SIGKILLed at every point of a session transfer and
// restarted on the same directory (Coordinator.Recover, then a retry of the
// interrupted transfer), and the native path is driven through the exec
// engine. It holds tests only.
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
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
)

// bins holds the programs TestMain builds: "agent" and "host".
var bins = map[string]string{}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "baton-crashtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, name := range []string{"agent", "host"} {
		out := filepath.Join(dir, name)
		cmd := osexec.Command("go", "build", "-o", out, "./testdata/"+name)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building testdata/%s: %v\n", name, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		bins[name] = out
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
