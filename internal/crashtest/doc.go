// Package crashtest holds baton's crash tests: host programs are SIGKILLed
// at every durable commit and spawn of a session transfer (the points the
// programs report themselves, so they follow the code) and at random
// moments, then restarted on the same directory, and the tests check what
// the rules promise: every handoff is there; each pending one is
// interrupted with its history kept; reservations are held exactly for
// pending handoffs; no launch is made twice, no target twice for one
// attempt, and none by Recover; wakeups stay pinned to the source unless
// the transfer completed; no agent process outlives a crash unreaped.
//
// Two programs are crashed. testdata/scripted drives transfers on a badger
// directory with the scripted engine, in process (scripted_test.go).
// testdata/host drives them with the exec engine and real child processes
// (testdata/agent, a stand-in agent CLI that forks a grandchild, both
// ignoring SIGTERM), restarts with Coordinator.Recover and retries the
// interrupted transfer (exec_test.go); the same tests drive the native
// path through the exec engine, and two coordinators on one store show the
// fence of two-phase starts: a node frozen between the commit that
// recorded its target's launch and the spawn never runs that agent once
// another node took the transfer over, and a reap that races an admission
// reaps again. The package holds tests only.
//
// # Basics
//
//	go test -race ./internal/crashtest
//
// BATON_CRASH_SEEDS sets how many random kills the scripted tests add
// (default 4; 1000 for a long run); BATON_CRASH_POINTS how many random
// kill moments TestCrashAnyPoint adds to its named ones (default 4), and
// BATON_CRASH_SEED replays a run's random moments. Run with -v to see how
// many points and seeds ran.
//
// # Caveats
//
// The tests build their programs with the go command and run on Unix only
// (they send SIGKILL); the exec engine's tests on Linux only (process
// groups, the parent-death signal and /proc). They find the processes of a
// run by an environment entry the host adds to every child
// (CRASHTEST_RUN=<its directory>), so they never touch other processes.
// The scripted engine's processes die with the program, as a real
// engine's would not; a real engine's leftovers are what engine.Reaper is
// for, and the exec engine's tests check them.
package crashtest
