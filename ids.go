package baton

// WorkspaceID names a workspace: the unit with one writer at a time (a
// worktree, a task, a thread). Callers choose it; baton never mints one.
type WorkspaceID string

// SessionID names one native conversation with an engine, as baton records
// it. baton mints it (see internal/ids); it is not the engine's native id.
type SessionID string

// HandoffID names one session-transfer request's row.
type HandoffID string

// WakeupID names a scheduled wakeup.
type WakeupID string

// ContinuationID names a queued continuation of a run.
type ContinuationID string

// MaxIDLen is the longest identifier (workspace, request id, ...) baton
// accepts, in bytes after trimming white space.
const MaxIDLen = 128

// ValidID reports whether s is a usable identifier: 1..MaxIDLen bytes after
// trimming, valid UTF-8, free of control characters (CheckField's rule
// "id"). It is the one rule every package applies to caller-chosen ids.
func ValidID(s string) bool { return CheckField("requestId", s) == nil }

// LaunchID names one engine launch: recorded durably before the spawn, and
// carried by every process of the launch so that a later process can find
// and reap them after a crash (see engine.Reaper).
type LaunchID string

// InstructionID names a queued instruction (a message sent while the agent
// was busy).
type InstructionID string
