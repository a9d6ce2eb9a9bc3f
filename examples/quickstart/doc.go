// Command quickstart runs two session transfers end to end, on the embedded
// default store, and prints what happened: it is the shortest complete program that uses
// package handoff, and the place to start reading.
//
// # Basics
//
//	go run ./examples/quickstart
//
// Everything runs in one process with no server to install: the store is
// store/badgerstore (the embedded default, fsync on) in a fresh temporary
// directory, the engine is the scripted engine of engine/enginetest (named
// "demo"), and each workspace's root is a directory beside the store. The
// directory is removed on exit.
//
// The first scenario is the ordinary path. A workspace with a mission runs
// a source session on demo-small; a wakeup is pinned to that session; the
// user asks to continue on demo-large with a summary. The coordinator stops
// the source, resumes it for one report-only turn (the scripted turn
// submits a Markdown report with its generation token through
// Coordinator.SubmitReport), publishes the target's opening prompt under
// <root>/.ai/handoffs/, starts the target and completes. The program prints
// the timeline of states, from WithObserver events, then checks the result:
// the target is the current session, the wakeup moved to it, the
// reservation is released, and the engine was launched three times.
//
// The second scenario is a failure and a retry. The target of attempt 1 is
// rejected at readiness: the transfer fails, the source is current again
// and the workspace stays reserved until the user decides. Decide(Retry)
// starts attempt 2, which completes.
//
// The program is factored into run(w io.Writer) so that its test can check
// its output.
//
// # Caveats
//
// The offsets in the timelines are wall-clock times since the transfer was
// created: they change from run to run, as do the ids of handoffs and the
// names of published documents. Everything else is deterministic.
//
// The scripted engine interprets no prompt: the report is canned, and the
// target "accepts" its opening prompt without reading it. With a real
// engine the same calls apply; only the registry changes.
package main
