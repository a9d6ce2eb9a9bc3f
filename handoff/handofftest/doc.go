// Package handofftest is an exported property-test harness for session
// transfers: Run drives random sequences of requests, engine outcomes,
// decisions, stops, clock moves, node pauses, crashes, shutdowns and
// restarts against several handoff.Coordinators sharing one store.Store, one
// fake clock and one scripted engine (engine/enginetest), and checks after
// every step that the guarantees below hold, against a reference model of
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
// Reconcile go to any node that runs.
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
// # The invariants
//
// After every step, and at every moment for the engine's record:
//
//  1. At most one pending handoff per workspace; a completed or cancelled
//     handoff never changes again.
//  2. At most one engine process runs in a workspace at any moment, a
//     report-only turn included: checked on the engine's record of every
//     process's lifetime across every node, not only at rest. A transfer
//     that failed or was interrupted with its stop confirmed leaves nothing
//     running; a session row says running exactly while its process runs.
//  3. A target is launched at most once per attempt (and a target session
//     serves one attempt), never after a cancel or Stop was requested, never
//     by Reconcile, never after the handoff became terminal. Every launch
//     has the shape the model expects, checked at the moment of the start:
//     a report-only turn resumes the source's native id on the source's
//     configuration; a target starts fresh on the requested configuration,
//     for the current attempt; an ordinary turn resumes its session's
//     native id if it has one; Dir is the workspace's root.
//  4. A completed handoff's target is the current session, and every wakeup
//     pinned to its source now points at the target with prompt and
//     deadline unchanged; no other wakeup moved.
//  5. A failed, interrupted or cancelled handoff leaves its source (if any)
//     current with its configuration and every target it started rolled
//     back; until a transfer completes, its source stays current.
//  6. Replaying a request id with the same fingerprint (in any spelling, on
//     any node) changes nothing observable.
//  7. A report is stored only when submitted with the current attempt's
//     token while generating; a stale, forged or invalid one changes no
//     report.
//  8. The reservation is held exactly while a handoff is pending, at the
//     epoch the model counts (one more per take); a write without the owner
//     token is refused while it is held; every launch while it is held
//     carries its current owner token. A wakeup that comes due while a
//     workspace is reserved is deferred, never fired.
//  9. Activation orders of a workspace's sessions are unique among those
//     above 0, the activation counter is never below them, the current
//     session has the highest, and the cached current session is the one
//     the harness's own statement of the current-session rule selects
//     (running first, then the highest order, then for rows at order 0 the
//     latest of start and end, then start, then creation; rolled-back rows
//     never).
//
// The invariants call no code under test but the one call invariant 8 is
// about (AssertWritable): they read the store and the engine's record, and
// the reference model (states, reports, epochs, wakeup placement, the
// current-session rule) is the harness's own.
//
// # Planted bugs
//
// TestHarnessCatchesPlantedBugs (in this package's tests) plants each bug
// below and asserts the harness catches it. Wrapper bugs go through
// Config.WrapStore and Config.WrapEngine. The bugs no wrapper can express
// are mutations: each is a change to the source of handoff or session
// (written in the test as the exact code it replaces, which must occur
// once, so that a change to the code cannot leave a bug silently
// unplanted), applied by a build of its own that reads a mutated copy of
// the file instead of the original (go test -overlay); the code itself
// carries no trace of them. The mutations cost a build each and run only
// when BATON_PLANTED_MUTATIONS is set:
//
//	BATON_PLANTED_MUTATIONS=1 go test -run TestHarnessCatchesPlantedBugs ./handoff/handofftest/
//
// Without it, the test plants the wrapper bugs only. The table below was
// produced once (not in CI) by
//
//	PLANTED_TABLE=5 BATON_PLANTED_MUTATIONS=1 go test -run TestHarnessCatchesPlantedBugs -v ./handoff/handofftest/
//
// which catches each bug five times and prints the median count of
// sequences (of at most 2,000 per run) it took, and the check that caught
// it most often (measured on memstore, two nodes, 2026-12-01, the
// mutations built and run two at a time; the run took 1 min 31 s):
//
//	| planted bug | family | planted through | sequences to catch (median of 5) | caught by |
//	|---|---|---|---|---|
//	| EpochNotRaised | fencing | store wrapper | 1 | invariant 8 |
//	| LeaseNeverRenewed | fencing | store wrapper | 3 | lease renewal |
//	| ReleaseOnFailure | fencing | store wrapper | 1 | invariant 8 |
//	| RebindOnFailure | sessions | store wrapper | 16 | invariant 4 |
//	| NoRestoreConfig | sessions | store wrapper | 3 | invariant 5 |
//	| CounterNotAdvancing | sessions | store wrapper | 8 | invariant 9 |
//	| ArchiveNotRefused | sessions | store wrapper | 4 | request outcome |
//	| ReportTurnFresh | launch shape | engine wrapper | 4 | invariant 3/8 |
//	| TargetOnSourceConfig | launch shape | engine wrapper | 1 | invariant 3/8 |
//	| OwnerTokenDropped | fencing | engine wrapper | 1 | invariant 3/8 |
//	| TargetNoDir | launch shape | engine wrapper | 2 | invariant 3/8 |
//	| StopOnAnyNodeConfirmed | fencing | mutation | 12 | request outcome |
//	| EarlyEndBeforeReadyLost | launch races | mutation | 28 | invariant 2 (rows and processes) |
//	| ShutdownKeepsUnconfirmed | shutdown | mutation | 10 | model state |
//	| ReplayAnyFingerprint | idempotency | mutation | 3 | invariant 6 |
//	| ReconcileRelaunches | fencing | mutation | 3 | model state |
//	| NoTokenCheck | attempt tagging | mutation | 17 | invariant 7 |
//	| UnconfirmedStopIsStop | attempt tagging | mutation | 12 | model state |
//	| ReconcileNoRetake | fencing | mutation | 4 | invariant 8 |
//	| OwnerNotChecked | fencing | mutation | 1 | invariant 8 |
//	| StaleCallbackApplied | attempt tagging | mutation | 23 | model state |
//	| CallbackAfterStop | attempt tagging | mutation | 50 | model state |
//	| TimeoutIgnoresUnconfirmed | attempt tagging | mutation | 114 | model state |
//	| RetryKeepsTarget | launch races | mutation | 6 | invariant 3 |
//	| TargetActivatedEarly | launch races | mutation | 1 | invariant 5 |
//	| ShutdownNoSettle | shutdown | mutation | 4 | model state |
//	| WakeupFiredWhileReserved | sessions | mutation | 53 | invariant 8 (deferred wakeups) |
//
// Every bug was caught in 5 of 5 runs. The counts vary widely from run to
// run (a race is caught when the scheduler lets it happen). The highest
// medians are the bugs that need a late engine callback or a race at the
// completion; lateCallback draws the interleavings of the first kind on
// purpose, since random single steps rarely line them up.
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
