// Package session runs a workspace's ordinary sessions: the starts,
// resumes, messages, wakeups and continuations that happen outside a
// session transfer (package handoff), under the workspace's reservation.
//
// # Basics
//
// A Service (New) owns the table of processes it launched, one per
// workspace at most; a handoff.Coordinator is built over it (handoff.New,
// Coordinator.Sessions), so a transfer and an ordinary start never run two
// processes in one workspace. Workspaces: CreateWorkspace, Workspace,
// Current, SetShare, ArchiveWorkspace; List reads a workspace's sessions,
// instructions, wakeups or continuations. Turns: Start (fresh, implicit
// resume, or explicit resume), Stop, Running. Messages: Message queues an
// instruction, delivered in order once nothing runs. Wakeups:
// ScheduleWakeup, FireDue. Continuations: Continue resumes a session with a
// native id on the target's engine and account, else opens a fresh one
// briefed from the record and the previous conversation;
// QueueContinuation and RunQueued keep one across restarts, never run
// twice.
//
// The current session is the running one, else the one activated last
// (every start and resume activates its session; a transfer's rolled-back
// target drops out until resumed explicitly); rows without an activation
// order fall back to their timestamps. Current reads no other session.
// DESIGN.md beside this file spells the rule out.
//
// When a turn's process ends, its end is recorded on the session's row
// with the context usage the engine reported for the turn
// (engine.ExitStatus.Usage, kept as store.Session.Usage with the launch
// that reported it) in the same transaction; a turn that reported none
// keeps the row's last usage, so an engine that reports nothing leaves it
// zero. A transfer records its source's and target's ends the same way.
//
// While a transfer holds the reservation, every write without its owner
// token is refused (ErrWorkspaceBusy): AssertWritable is that guard for a
// host's own writes. Due
// wakeups of a reserved workspace are deferred, never dropped.
//
// # Caveats
//
// The process table is per process: with several processes on one store,
// the reservation row keeps a second writer out. After a restart,
// handoff.Coordinator.Recover ends the rows a crash left running. Write
// session rows only through a Service or a Coordinator.
package session
