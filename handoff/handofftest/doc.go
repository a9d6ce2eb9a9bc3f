// Package handofftest is an exported property-test harness for session
// transfers: Run drives random sequences of requests, engine outcomes,
// decisions, stops, clock moves, node pauses, crashes, shutdowns and
// restarts against several handoff.Coordinators sharing one store.Store, one
// fake clock and one scripted engine (engine/enginetest), and checks after
// every step that the guarantees listed under "What it checks" hold, against a reference model of
// its own.
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
// instance ids, each with its own session service, reaching the shared
// store and engine through a gate. A node can be frozen (its store and
// engine calls wait, its leases lapse while the clock moves, the callbacks
// of its processes reach it late when it thaws), crash (its Coordinator is
// abandoned without Shutdown), shut down without a Reconcile after it, and
// restart with its instance id. Create, Stop, Decide, SubmitReport and
// Reconcile go to any node that runs; messages (session.Service.Message,
// CancelInstruction, ResendInstruction, DeliverPending) go to the node that
// runs the workspace's agent. Some steps line up what single steps rarely
// do: a crash of the node driving a transfer, its lease lapsing and a
// survivor's Reconcile (takeOver); a Stop its frozen driver never carries
// out, met by the Reconcile of the driver's next life (stopThenCrash);
// messages queued behind a turn, one cancelled, then the turn's own end
// (queueBurst); a message queued behind a turn, then a transfer there and
// a delivery asked for while it holds the workspace (queueAcross); a late
// engine callback (lateCallback); a session service's Reap, with no
// reservation taken, that the engine's reaper answers engine.Timeout or
// engine.Failed (reap); a Stop the engine answers only once the stop
// timeout has run out on the clock (slowStop); a context-pressure policy
// set or set again, a turn whose usage is drawn against its threshold and
// that ends on its own, and sometimes the cancel of the transfer its
// settle made, then another round (pressureTurn). The node that records
// a settle that fires the policy sometimes crashes right after the
// settle's commit, and another node's Reconcile sometimes races its
// creation of the transfer. The reaper may answer so
// inside a Reconcile, a Recover (a single node's restart) and a
// transfer's stop too, and a transfer a Reconcile left unconfirmed is
// then sometimes cancelled at once.
//
// One attempt in three has a request land between a commit and its
// effect, at hooks in the nodes' store and engine (the waits for rest
// between steps never show these moments): a Stop, to any node, right
// after the commit that enters starting, or from inside the target's
// launch after its fence and before its spawn (the launch holds the
// workspace's launch lock: the stop is carried out once the target runs,
// as its script answers); a freeze of the driving node right after that
// commit, before it launches the target and arms its readiness timeout,
// then a clock move and a thaw (the timeout still counts from the
// commit); a crash of the driving node between the launch record and its
// spawn (the record stays live, nothing runs, a Reconcile must reap it).
//
// Where the model expects a request to be refused, the harness checks the
// refusal is the one it names: its sentinel (errors.Is) and its code
// (baton.ErrorCode). Late report submissions carry forged tokens and the
// tokens of attempts that no longer generate, with new text and with the
// text already stored, to the handoff's workspace and to another.
//
// Each step's engine behaviour is scripted before the step (how what runs
// stops, whether the report-only turn submits a report with the right
// token, whether readiness comes at once, after a delay, never, or right
// before the first turn ends), so the model predicts where the transfer
// comes to rest; the harness waits for that (bounded) and checks. A node
// is at rest only once it has armed what the next clock move must find:
// its next lease renewal, and a readiness or generation timeout for the
// very deadline the model counts from the commit that started it. Where the
// model cannot tell (a paused node thawing, a transfer taken over from a
// lapsed node), it checks the transfer rests in a legal state and adopts it.
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
// policy's rules fire, once each, created by a Reconcile or a restart
// when a crash or a shutdown left it due. DESIGN.md, beside this file, states each invariant in full
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
// The harness owns the engine (it must script it) and the clock (a fake:
// timeouts, lease lapses and readiness delays come from advancing it), so
// it tests Coordinators with a store, not a host's own engine.
//
// By default the harness routes some requests the way a host that knows
// where each agent runs would: a Create goes to the node that runs the
// workspace's agent; a crash or shutdown takes the node's agent processes
// with it (and a restarted node ends the session rows of its previous
// life); Reconcile goes only to a node that runs no process of the
// transfers it holds. Config.Unsteered drops all of that: requests go to
// any node, and agent processes outlive the node that launched them, as a
// subprocess engine's do when its host crashes. Every guarantee must then
// hold through baton's own means: another node's launch is stopped through
// the engine.Reaper (the scripted engine is one, shared by every node, as
// the processes of one machine are), and a restarted node learns what its
// previous life left running from the launch records. The model predicts
// that a stop reaped elsewhere is confirmed whatever the process's own
// script says, and that a node reaps another's process only once its own
// stop is confirmed. The default run steers because it predicts more
// exactly (it knows which node answers for each process); both run in
// this package's tests.
//
// The multi-node run found, and baton now fixes, a stop requested between
// a node's take of a reservation and its subscription to the workspace
// (never carried out on a clock that stands still), a reaped launch whose
// session row stayed running (and so stayed the current session after a
// transfer completed), a readiness timeout armed only once the launch
// returned, the same timeout armed a clock step late (its deadline turned
// into a duration before the clock moved), and a stop requested again,
// after an unconfirmed one, dropped while the last stop's claim was held.
// Long single-node runs found a stop carried out twice (a
// background stop that claimed a request after a Stop call had answered
// it, halting the workspace again, even under the next transfer's target)
// and a target stopped before readiness taken for a first turn that ended
// cleanly (its transfer completed). Each fix has a regression test in
// baton's own packages. The harness also found faults of its own (the
// model's taker after an adoption, a cut-short Shutdown's late writes, a
// lease renewal the harness moved the clock past because a crashed node's
// timers made up its count, a readiness delay the scripted engine armed
// after showing the launch, a held target's release that looked for the
// driving node only after the completion it set off had released the
// reservation), fixed here. baton's own tests run it on memstore and
// badgerstore with two nodes.
package handofftest
