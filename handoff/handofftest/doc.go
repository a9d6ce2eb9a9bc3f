// Package handofftest is an exported property-test harness for session
// transfers: Run drives random sequences of requests, engine outcomes,
// decisions, stops, clock moves, node pauses, crashes, shutdowns and
// restarts against several handoff.Coordinators sharing one store.Store, one
// fake clock and one scripted engine (engine/enginetest), and checks after
// every step that the guarantees listed under "What it checks" hold, against
// a reference model of its own.
//
// # Basics
//
// A store backend proves itself in one line, the way testing/fstest does:
//
//	func TestTransfers(t *testing.T) {
//		handofftest.Run(t, handofftest.Config{NewStore: openMyStore})
//	}
//
// Each sequence runs two nodes (Config.Nodes): Coordinators with distinct
// instance ids, each with its own session service. A node can be frozen,
// crash, shut down and restart; requests land between a commit and its
// effect at hooks in the nodes' store and engine; each step's engine
// behaviour is scripted before the step, so the model predicts where the
// transfer comes to rest, and where it cannot tell it checks the transfer
// rests in a legal state. Where the model expects a refusal, the harness
// checks its sentinel and its code. DESIGN.md, beside this file, says what a
// sequence does step by step.
//
// # What it checks
//
// After every step: at most one pending transfer per workspace and one
// engine process at any moment; a target launched at most once per
// attempt; a completed transfer's target current, with the wakeups bound
// to it; a failed or cancelled one leaving its source current; a replayed
// request answered, never relaunched; a report stored only with the
// attempt's token; the reservation held exactly while a transfer is
// pending; activation orders unique; the instruction queue as the model
// has it; and a context-pressure transfer for exactly the settles the
// policy's rules fire, once each. DESIGN.md states each invariant in full
// and lists the planted bugs the harness must catch.
//
// # Run size
//
// The run's size follows rapid's flags: -rapid.checks (sequences, 100 by
// default) and -rapid.steps (steps per sequence). This package's own tests
// also read BATON_RAPID_CHECKS when -rapid.checks is left alone, for long
// runs: BATON_RAPID_CHECKS=100000 go test ./handoff/handofftest/. A
// failure is shrunk to a minimal sequence and saved under testdata/rapid/;
// -rapid.failfile replays it. A failure the scheduler made may not replay,
// so its message ends with the last lines every node logged, interleaved
// with the steps taken.
//
// # Caveats
//
// The harness owns the engine (it must script it) and the clock (a fake),
// so it tests Coordinators with a store, not a host's own engine. By
// default it routes requests the way a host that knows where each agent
// runs would; Config.Unsteered sends them to any node and lets agent
// processes outlive the node that launched them, so every guarantee must
// hold through baton's own means (DESIGN.md, "Steering").
package handofftest
