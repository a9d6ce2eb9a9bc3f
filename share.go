package baton

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
