package baton

import (
	"fmt"
	"strings"
)

// EngineConfig says which engine runs a session and how. Engine names an
// engine registered with the coordinator (for example "claude", "codex" or
// "demo"); the other fields are passed to it. The zero value is invalid.
type EngineConfig struct {
	Engine          string `json:"engine"`
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	PermissionMode  string `json:"permissionMode,omitempty"`
	// Account names the credentials the engine uses. A native session id
	// can only be resumed on the same engine and account (see
	// session.Service.Continue). Empty means the engine's default account.
	Account string `json:"account,omitempty"`
}

// Normalize returns c with surrounding white space trimmed from every field,
// so that two spellings of one configuration compare and fingerprint equal.
func (c EngineConfig) Normalize() EngineConfig {
	return EngineConfig{
		Engine:          strings.TrimSpace(c.Engine),
		Model:           strings.TrimSpace(c.Model),
		ReasoningEffort: strings.TrimSpace(c.ReasoningEffort),
		PermissionMode:  strings.TrimSpace(c.PermissionMode),
		Account:         strings.TrimSpace(c.Account),
	}
}

// Validate reports an ErrInvalid error when c names no engine or a field
// breaks its limit or rule (see CheckField: at most MaxIDLen bytes, no white
// space or control character inside, not starting with '-', so that no
// value reaches an agent CLI as a flag). Whether the engine supports c is
// the engine registry's question, not this one's.
func (c EngineConfig) Validate() error {
	n := c.Normalize()
	for _, f := range [...][2]string{{"engine", n.Engine}, {"model", n.Model}, {"reasoningEffort", n.ReasoningEffort}, {"permissionMode", n.PermissionMode}, {"account", n.Account}} {
		if err := CheckField(f[0], f[1]); err != nil {
			return fmt.Errorf("engine config: %w", err)
		}
	}
	return nil
}

// SameAccount reports whether a native session minted under c can be resumed
// under d: same engine and same account.
func (c EngineConfig) SameAccount(d EngineConfig) bool {
	c, d = c.Normalize(), d.Normalize()
	return c.Engine == d.Engine && c.Account == d.Account
}

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

// LaunchID names one engine launch: recorded durably before the spawn, and
// carried by every process of the launch so that a later process can find
// and reap them after a crash (see engine.Reaper).
type LaunchID string

// InstructionID names a queued instruction (a message sent while the agent
// was busy).
type InstructionID string

// Share says what a transfer's briefing carries to the target session
// besides the record (mission, tasks, instructions, git facts): the
// source's conversation and its report. A briefing leaves the machine: it
// goes to the target engine's provider, which may not be the source's.
// A workspace has a setting (store.Workspace.Share) and a transfer request
// may override it (handoff.Request.Share); the zero value means "not set":
// the workspace's setting for a request, ShareConversation for a
// workspace.
type Share string

const (
	// ShareConversation: the conversation (bounded and redacted) and the
	// report. The default.
	ShareConversation Share = "conversation"
	// ShareReport: the report only; the conversation stays behind, and the
	// target cannot read it (read_source_history refuses).
	ShareReport Share = "report"
	// ShareNone: neither the conversation nor the report.
	ShareNone Share = "none"
)

// Validate reports an ErrInvalid error unless s is blank or one of the three
// values.
func (s Share) Validate() error {
	switch s {
	case "", ShareConversation, ShareReport, ShareNone:
		return nil
	}
	return Errorf(ErrInvalid, "share %.40q is none of %q, %q, %q", string(s), ShareConversation, ShareReport, ShareNone)
}

// Conversation reports whether s lets the conversation out (blank counts as
// ShareConversation; an unknown value lets nothing out).
func (s Share) Conversation() bool { return s == "" || s == ShareConversation }

// Report reports whether s lets the report out (blank counts as
// ShareConversation; an unknown value lets nothing out).
func (s Share) Report() bool { return s == "" || s == ShareConversation || s == ShareReport }
