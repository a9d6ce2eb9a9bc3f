// Package handoff moves a workspace's conversation from a source session to
// a fresh target session (same LLM, another model, or another engine),
// optionally with a report the source writes first, without dropping it,
// launching it twice, or replaying it behind the user's back.
//
// # Basics
//
// A Coordinator (New) is the only writer of handoff rows. Create takes a
// Request with an idempotency key; the pair (workspace, request id) is
// unique forever, and a replay with the same fingerprint returns the
// existing handoff unchanged. The transfer then runs through a state
// machine (github.com/qmuntal/stateless, FiringImmediate), fired inside one
// store transaction per transition:
//
//	stopping -> [generating ->] starting -> completed
//	             any pending -> failed | interrupted | cancelled
//
// Engine side effects (stop the source, resume it for a report-only turn,
// start the target) happen only after the transaction that permits them has
// committed, and every engine outcome is fed back tagged with its attempt: a
// late callback of an earlier attempt, or one that arrives after a Stop was
// requested, is refused (ErrStaleAttempt), never applied.
//
// While a transfer is pending the workspace is reserved: AssertWritable
// refuses every write without the owner token (ErrWorkspaceBusy), and due
// wakeups are deferred. Completion activates the target, moves the
// source's pending wakeups to it and releases the reservation in one
// transaction. A failure, Stop, Shutdown or restart restores the source as
// the current session with its configuration and rolls the target back.
// failed and interrupted wait for the user: Decide(Retry), Decide(Skip) or
// Decide(Cancel). Recover, run once at start by a process that serves its
// store alone, ends the session rows a crash left running and turns every
// pending transfer into interrupted; it launches nothing.
//
// Progress is observable without polling by hand: Watch yields a
// workspace's change feed (every committed change of its handoffs,
// sessions and queued instructions, numbered by a durable per-workspace
// sequence, so a reader resumes after the last number it saw), Wait blocks
// until a transfer settles, and List returns a workspace's transfers.
//
// The machine, rendered by Graph (Mermaid, from the same table that
// configures it):
//
//	stateDiagram-v2
//	    [*] --> stopping: Create
//	    stopping --> generating: SourceStopped [summary wanted, source resumable]
//	    stopping --> failed: SourceStopped [summary wanted, source not resumable]
//	    stopping --> starting: SourceStopped [no summary wanted, or report stored]
//	    stopping --> failed: SourceStopUnconfirmed
//	    generating --> generating: SubmitReport [token of this attempt, valid text]
//	    generating --> generating: ReportRefused [token of this attempt, text refused]
//	    generating --> starting: GenerationEnded [clean exit, report stored]
//	    generating --> failed: GenerationEnded [no report or error exit]
//	    generating --> starting: GenerationTimedOut [stop confirmed, report stored]
//	    generating --> failed: GenerationTimedOut [otherwise]
//	    starting --> completed: TargetReady
//	    starting --> failed: TargetFailed
//	    starting --> completed: TargetExited [clean exit before ready]
//	    failed --> stopping: Retry / Skip [stop confirmed]
//	    interrupted --> stopping: Retry / Skip [stop confirmed]
//	    any pending --> cancelled: Cancel [stop confirmed]
//	    any pending --> failed: CancelUnconfirmed [stop not confirmed]
//	    any pending --> interrupted: Shutdown, Reconcile
//	    completed --> [*]
//	    cancelled --> [*]
//
// The full rendering, edge by edge, is in README.md beside this file and is
// checked by a test against Graph().Mermaid.
//
// Every attempt publishes the target's opening prompt as a Markdown file
// under <workspace root>/.ai/handoffs/ (created exclusively, mode 0600,
// never through a symlink, never outside the root; a .gitignore there
// ignores everything).
//
// # Commits
//
// A transfer costs one durable store commit per state change that must
// survive a crash, and no more: 3 without a report, 5 with one, counted
// from Create until the transfer is completed with its target ready
// (whoever commits: the Coordinator, the session Service, engine
// callbacks). Without a report:
//
//  1. Create: the handoff in stopping and the workspace's reservation, so
//     that nothing else starts there and a crash leaves a pending transfer
//     for Reconcile to find.
//  2. SourceStopped: the source's end (its session row ended, its launch
//     record closed), the target's session row and its launch record, so
//     that the launch is on record before its spawn.
//  3. TargetReady: completed, the target activated, wakeups rebound and
//     the reservation released.
//
// With a report, SourceStopped moves to generating instead (the source's
// end and the report-only turn's launch record, before its spawn), and two
// more commits follow: SubmitReport stores the report (it must survive the
// turn, which may go on or crash), and GenerationEnded records the turn's
// exit (its launch record closed) with the target's session row and launch
// record. A process end is recorded inside the transition that acts on it
// (session.Service.HaltDeferred, session.Service.ExitEnd); only when that
// transition is refused (a Stop was requested meanwhile, the attempt moved
// on) does the end cost a commit of its own. Reads happen in the
// transaction that needs them or in read-only views, which commit nothing;
// each step of a transfer starts from the row the previous step's commit
// returned, without reading it again (a Stop requested meanwhile is caught
// by the launch's check and by the next transition's, both transactions).
// On a store several processes share (PostgreSQL, memstore), an engine
// with two-phase starts (engine.StartRequest.Admit, as the exec engine)
// adds one commit per launch, its admission after the spawn, which fences
// out a process frozen between its launch's commit and the spawn: 4
// without a report, 7 with one (the report-only turn is a launch too). On
// a store.Exclusive store (badgerstore) no other process can take the
// reservation meanwhile, and the admission is skipped.
//
// # Caveats
//
// A stop that is not confirmed is never treated as a stop: the handoff
// goes to failed with StopUnconfirmed set and keeps the reservation, and
// Retry and Skip are refused (ErrStopUnconfirmed) until a Stop is
// confirmed, so a process that may still run never gets a sibling.
//
// The generation token of a report-only turn exists in this process's
// memory only (the store keeps its SHA-256): a report-only turn does not
// survive a restart, which turns it into interrupted like any other pending
// transfer.
//
// Several coordinator processes may share a store: the reservation row
// fences launches, and its runtime lease names the process that drives a
// transfer, renewed every third of its TTL (WithLeaseTTL). Only that
// process confirms a stop: Stop or Decide(Cancel) sent to another process
// records the request and waits for the driving process to carry it out
// (it learns of it through the store). Reconcile leaves a transfer alone
// while another process's lease on it is live, and interrupts it once the
// lease lapses (on an exclusive store, at once). Each process knows only
// the engine processes it started itself.
//
// A target must confirm readiness within WithReadyTimeout, and every stop
// is bounded by WithStopTimeout: nothing waits forever, and a stop that
// runs out of time counts as unconfirmed.
package handoff
