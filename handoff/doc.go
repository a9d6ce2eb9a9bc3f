// Package handoff moves a workspace's conversation from a source session to
// a fresh target session (same LLM, another model, or another engine),
// optionally with a report the source writes first, without dropping it,
// launching it twice, or replaying it behind the user's back.
//
// # Basics
//
// A Coordinator (New) is the only writer of handoff rows (store.Handoff).
// Create is idempotent by (workspace, request id). Each transition of the
// machine (MachineGraph; README.md beside this file draws it) fires inside
// one store transaction, and engine side effects (stop the source, resume
// it for a report-only turn, start the target) run only once that
// transaction has committed; a late engine callback of another attempt is
// refused, never applied:
//
//	stopping -> [generating ->] starting -> completed
//	             any pending -> failed | interrupted | cancelled
//
// While a transfer is pending its workspace is reserved: a write without
// the owner token is refused (session.Service.AssertWritable). Completion
// activates the target and moves the source's wakeups to it; a failure,
// Stop or restart restores the source. failed and interrupted wait for
// Decide (Retry, Skip; Cancel is Stop). Watch, Wait and List observe.
// The target's briefing (DefaultBriefing, or WithBriefing's Build) carries
// the record, the report and the conversation as the user chose
// (baton.Share), and is published under <workspace root>/.ai/handoffs/.
//
// # Restart
//
// Before serving, a process that serves its store alone (badgerstore, or
// the only process on a shared store) calls Recover: it kills and confirms
// gone what a crash left running, ends the rows it left running and turns
// pending transfers into interrupted. Processes sharing a store (pgstore)
// call Reconcile instead, at start and periodically: it settles only the
// transfers whose driving process's lease lapsed. Neither launches what a
// crash cut; both create the context-pressure transfers it left due.
//
// # Context pressure
//
// A workspace's policy (SetPressure, store.PressurePolicy) hands it over by
// itself before the context window fills: when a turn of the current
// session ends on its own having reported a usage (engine.Usage) of at
// least Threshold times its window, a transfer to a fresh session starts,
// with the policy's target (default the source's configuration) and a
// report first if asked. The decision is taken in the transaction that
// records the turn's end (the session is marked store.PressureDue, and
// ordinary writes wait as for a reservation, so a queued instruction goes
// to the target, or to the session itself when the transfer is refused),
// and the transfer's request id is derived from the session and the
// turn's launch, so two nodes or a restart create it once.
// Never mid-turn, never for a stopped turn, never while the workspace is
// reserved; once per source session: a cancelled or skipped pressure
// transfer leaves the policy disarmed for the session until SetPressure
// re-arms it. The handoff records why it started (store.HandoffReason).
//
// Choose the threshold to leave room for what follows it: the turn that
// crosses it has already run, and a report-only turn (Report) adds its
// prompt and the report to a nearly full window. 0.8 suits a 200k-token
// window; lower it for a small window or a long report. An engine that
// reports no usage (or no window) never fires the policy.
//
// # Caveats
//
// An unconfirmed stop is never taken for a stop: the handoff fails with
// StopUnconfirmed set and keeps the reservation until a Stop is
// confirmed, by the process that drives the transfer (Timeouts.Lease). A
// report-only turn does not survive a restart. Timeouts.Ready and the
// session service's StopTimeout (session.Options) bound every launch and
// stop; DESIGN.md beside this file counts a transfer's commits and spells
// out the timeouts.
package handoff
