// Package baton lets tools that run AI coding agents hand an agent's work to
// a fresh session without dropping it, launching it twice, or replaying it
// behind the user's back.
//
// This root package holds the vocabulary every other package shares:
// identifiers (WorkspaceID, SessionID, HandoffID, ...), EngineConfig, and
// the error codes with ErrorCode. The work is done in subpackages.
//
// # Basics
//
// baton covers three kinds of handoff, each learnt from a real tool's bug:
//
//   - Session transfer (package handoff): a workspace's conversation moves
//     from a source session to a fresh target session (same LLM, another
//     model, another engine), optionally with a report the source writes
//     first. A state machine fired inside store transactions, idempotent
//     requests, a reservation with an owner token while the transfer is
//     pending, engine effects only after commit, explicit retry, skip and
//     cancel, and a restart that interrupts and never replays.
//   - Continuation (packages session and recap): a run with nothing to
//     resume continues in a fresh session briefed from its record; resume
//     stays byte-for-byte whenever possible; timers may only resume.
//   - Generation handoff (package host): a multi-session host
//     superseded by a newer build tells its clients, parks sessions once
//     they settle, and exits.
//
// Behind small interfaces: store.Store for records (store/badgerstore
// embedded, the default; store/pgstore on PostgreSQL for several processes;
// store/memstore in memory; store/storetest is the conformance suite a
// backend passes) and engine.Engine for agents (engine/exec runs agent CLIs
// as child processes; engine/enginetest is a scripted engine). The property
// harness handoff/handofftest checks the transfer invariants over random
// sequences against any store.
//
// # Guarantees
//
//   - A request id is idempotent forever: the same request returns the same
//     transfer, a different one with the same id is refused.
//   - At most one transfer is pending per workspace, and at most one engine
//     process runs in a workspace launched through baton.
//   - A target is launched at most once per attempt, never after a Stop, and
//     never by a restart: Reconcile turns pending transfers into interrupted
//     and the user decides.
//   - A stop that is not confirmed is never taken for one.
//
// # Errors
//
// Every error baton returns carries the code of one code-level error
// (ErrInvalid, ErrNotFound, ErrConflict, ErrBusy, ErrStale, ErrUnavailable,
// ErrUnsupported, ErrInternal), which matches every error of its code with
// errors.Is; ErrorCode extracts the code as a string for a wire. Each
// package declares sentinels for its cases (handoff.ErrTransferPending,
// session.ErrWorkspaceBusy, ...); match them with errors.Is too.
//
// # Caveats
//
// Each process knows the engine processes it started itself; with several
// processes on one store, the stored reservation (its epoch) fences
// launches, only the process that drives a transfer confirms its stop, and
// every launch is recorded before its spawn so that a dead process's
// launches can be reaped (engine.Reaper) before their workspace is
// released. A store decides durability (memstore keeps nothing across a
// restart).
package baton
