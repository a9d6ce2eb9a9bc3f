// Package handoff moves a workspace's conversation from a source session to
// a fresh target session (same LLM, another model, or another engine),
// optionally with a report the source writes first, without dropping it,
// launching it twice, or replaying it behind the user's back.
//
// # Basics
//
// A Coordinator (New) is the only writer of handoff rows (store.Handoff);
// Create is idempotent by (workspace, request id). Each transition fires
// inside one store transaction, and engine side effects run only once it
// has committed (MachineGraph; README.md beside this file draws it, and
// DESIGN.md counts a transfer's commits and spells out the timeouts):
//
//	stopping -> [generating ->] starting -> completed
//	             any pending -> failed | interrupted | cancelled
//
// While a transfer is pending its workspace is reserved: a write without the
// owner token is refused. failed and interrupted wait for Decide (Retry,
// Skip; Cancel is Stop); Watch, Wait and List observe; the target's briefing
// is DefaultBriefing's unless WithBriefing says otherwise.
//
// # Restart
//
// A process that serves its store alone (badgerstore) calls Recover before
// serving; processes sharing a store (pgstore) call Reconcile, at start and
// periodically. Neither launches what a crash cut, and a report-only turn
// does not survive a restart. An unconfirmed stop is never taken for a
// stop: the handoff fails with StopUnconfirmed set and keeps the
// reservation until a Stop is confirmed.
//
// # Context pressure
//
// A workspace's policy (SetPressure) hands it over by itself before its
// context window fills: when a turn of the current session ends on its own
// having used at least Threshold of its window (engine.Usage), a transfer to
// a fresh session starts, once per source session, created once however many
// nodes or restarts see it. An engine that reports no usage never fires it.
package handoff
