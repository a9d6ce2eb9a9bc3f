// Package session owns session records and the rules that pick among them:
// which session is current, which one an ordinary message resumes, how
// activation orders move, where wakeups go, and who may launch while a
// workspace is reserved.
//
// # Basics
//
// A Service runs ordinary sessions outside any transfer: Start (fresh,
// implicit resume, or explicit resume), Stop, ScheduleWakeup and FireDue.
// It keeps the table of processes it launched, one per workspace at most,
// and the transfer coordinator (package handoff) launches through the same
// table with Launch and stops with Halt.
//
// Activation order: each workspace has a strictly increasing counter.
// Every start, resume and source restoration gives the session
// max(order)+1 (Activate); a rolled-back transfer target gets -1 (Rollback),
// which keeps it in history but out of default selection and implicit
// resume; an explicit resume activates it again. The current session is a
// running session first, else the highest order >= 0, with rows still at 0
// (written before ordering existed) falling back to max(startedAt, endedAt),
// then startedAt (SelectCurrent). Implicit resume is the same rule
// restricted to sessions on the same engine and account that have a native
// id (SelectImplicitResume). The workspace row caches the current session,
// so Current costs no scan, and keeps its running sessions and a ranking
// of the others linked through the session rows, so that an activation, an
// end or a rollback finds the next current session without reading the
// workspace's sessions either (Refresh re-derives all of it after rows are
// changed by hand). An implicit resume walks the same ranking from its
// head, and reads every session only when no session on the engine and
// account asked for is among the first few.
//
// Reservations: while a transfer is pending the workspace's reservation is
// held. CheckWritable (and Service.AssertWritable) refuse any write without
// the owner token with ErrWorkspaceBusy; a token from an older take of the
// reservation gets ErrStaleEpoch (fencing). Due wakeups of a reserved
// workspace are deferred, never fired and never dropped. RebindWakeups
// moves wakeups pinned to a transfer's source onto its target, and only the
// completion transaction calls it.
//
// Continuations: PlanContinue resumes whenever a session with a native id
// exists on the target's engine and account, byte-for-byte (the same resume
// argument, the user's prompt alone), and otherwise opens a fresh session
// briefed from the record (package recap); automated triggers may only
// resume, checked when they fire. Continue runs a plan now, retrying once as
// a fresh briefed session when the engine reports the native session
// missing (never on an authentication failure or after a cancel).
// QueueContinuation and RunQueued keep a continuation, with how the previous
// attempt ended, across restarts; it is marked started before its launch, so
// it never runs twice.
//
// Reconcile, run once at start, ends the rows a crash left running.
//
// # Caveats
//
// The process table is per Service, so per process: with several
// coordinator processes on one store, the reservation row (not the table)
// is what keeps a second writer out. A Service does not stop the processes
// it launched when it is closed.
//
// The running list and ranking a workspace keeps are only as right as the
// rows: after writing session rows by hand (outside Activate, Rollback and
// the Service), call Refresh. A workspace written by an earlier release
// with a long history keeps no ranking until Reconcile links it: until
// then its ends and rollbacks read its sessions, as they used to.
package session
