// Package crashtest holds the crash tests of the embedded store: they
// build the program in crashprog, let it drive session transfers on a
// badger directory, SIGKILL it right after each durable commit and each
// spawn of the lifecycle (the points the program itself reports, so they
// follow the code) and at random moments, then restart it on the same
// directory with Recover and check what the rules promise: every handoff
// is there; each pending one is interrupted with its history kept;
// reservations are held exactly for pending handoffs; no launch is made
// twice, no target twice for one attempt, and none by Recover; wakeups
// stay pinned to the source unless the transfer completed.
//
// # Basics
//
// go test ./internal/crashtest runs every commit-and-spawn point of two
// transfers (one without a report, one with) and BATON_CRASH_SEEDS random
// kills (default 4). Set BATON_CRASH_SEEDS=1000 for a long run. Run with
// -v to see how many points and seeds ran.
//
// # Caveats
//
// The tests build the program with the go command and run on Unix only
// (they send SIGKILL). The engine is the scripted one, in process: its
// processes die with the program, as a real engine's would not; a real
// engine's leftovers are what engine.Reaper is for.
package crashtest
