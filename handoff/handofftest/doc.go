// Package handofftest is an exported property-test harness for session
// transfers: Run drives random sequences of requests, engine outcomes,
// decisions, stops, shutdowns, crashes and restarts against a
// handoff.Coordinator over any store.Store and the scripted engine
// (engine/enginetest), and after every step checks the nine invariants below against a reference
// model.
//
// # Basics
//
// A store backend proves itself in one line, the way testing/fstest does:
//
//	func TestTransfers(t *testing.T) {
//		handofftest.Run(t, handofftest.Config{NewStore: openMyStore})
//	}
//
// Each step's engine behaviour is scripted before the step (how the source
// stops, whether the report-only turn submits a report with the right
// token, how the target becomes ready), so the model predicts the state the
// transfer comes to rest in; the harness waits for it (bounded) and then
// checks:
//
//  1. at most one pending handoff per workspace; terminal states never change;
//  2. at most one engine process runs in a workspace at any moment;
//  3. a target is launched at most once per attempt, never after a cancel or
//     Stop, never by Reconcile;
//  4. completed: the target is current and the source's wakeups point at it
//     with prompt and deadline unchanged;
//  5. failed, interrupted, cancelled: the source (if any) is current with its
//     configuration, and no rolled-back target is a default choice;
//  6. replaying a request id with the same fingerprint changes nothing;
//  7. a report is stored only with the current attempt's token in generating;
//  8. the reservation is held exactly while a handoff is pending, and a launch
//     without the owner token is refused while it is held;
//  9. activation orders are unique among those > 0 and the current session has
//     the highest.
//
// The run's size follows rapid's flags: -rapid.checks (sequences) and
// -rapid.steps (steps per sequence). A failure is shrunk to a minimal
// sequence and saved under testdata/rapid/ to replay on every later run.
//
// # Caveats
//
// The harness owns the engine (it must script it) and the clock (a fake:
// generation timeouts are reached by advancing it), so it tests the
// Coordinator with a store, not a host's own engine. A "crash" drops the
// Coordinator without Shutdown and kills every engine process, as the death
// of the host process would; a "shutdown" is the graceful path. Both are
// followed by a new Coordinator on the same store and Reconcile.
package handofftest
