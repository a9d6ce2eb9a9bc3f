package host

import (
	"encoding/json"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
)

// Command types a host serves.
const (
	CmdGetProtocolInfo = "get_protocol_info"
	CmdOpenSession     = "open_session"
	CmdPrompt          = "prompt"
	CmdGetState        = "get_state"
	CmdAbort           = "abort"
	CmdCloseSession    = "close_session"
)

// Record types: the response to a command, and the events.
const (
	TypeResponse        = "response"
	EventAgentStart     = "agent_start"
	EventAgentSettled   = "agent_settled"
	EventMessage        = "message"
	EventSessionClosed  = "session_closed"
	EventHostSuperseded = "host_superseded"
)

// Reason says why a session closed (the reason of session_closed).
type Reason string

// The reasons of session_closed.
const (
	ReasonClientClose   Reason = "client_close"
	ReasonIdleEvicted   Reason = "idle_evicted"
	ReasonHostShutdown  Reason = "host_shutdown"
	ReasonHandoffParked Reason = "handoff_parked"
	ReasonError         Reason = "error"
)

// Capabilities get_protocol_info lists.
const (
	CapMultiSession      = "multi_session"
	CapGenerationHandoff = "generation_handoff"
)

// RetryAfterMS is the retry_after_ms of every session_path_in_use answer.
const RetryAfterMS = 2000

// Command is one command line. Fields a command does not use are left
// empty.
type Command struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	SessionID   string `json:"sessionId,omitempty"`
	SessionPath string `json:"sessionPath,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	Text        string `json:"text,omitempty"`
}

// Response answers one command: Data on success, Error (a wire code) and
// optional ErrorData on failure.
type Response struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Command   string `json:"command"`
	Success   bool   `json:"success"`
	Data      any    `json:"data,omitempty"`
	Error     string `json:"error,omitempty"`
	ErrorData any    `json:"errorData,omitempty"`
}

// Successor says where the generation that supersedes a host listens.
type Successor struct {
	Socket string `json:"socket"`
}

// HostSuperseded is the record a draining host writes to every connection,
// once, before anything else changes for it. Successor encodes as null
// when unknown.
type HostSuperseded struct {
	Type       string     `json:"type"`
	InstanceID string     `json:"instanceId"`
	Generation int        `json:"generation"`
	Successor  *Successor `json:"successor"`
}

// SessionClosed is the terminal record of a session on a connection. It is
// also the errorData of a session_closed failure.
type SessionClosed struct {
	Type        string `json:"type"`
	SessionID   string `json:"sessionId"`
	Reason      Reason `json:"reason"`
	SessionPath string `json:"sessionPath"`
}

// ProtocolInfo is the data of get_protocol_info.
type ProtocolInfo struct {
	InstanceID   string   `json:"instanceId"`
	Generation   int      `json:"generation"`
	PID          int      `json:"pid"`
	Capabilities []string `json:"capabilities"`
	Draining     bool     `json:"draining"`
}

// OpenResult is the data of open_session. Attached is true when the path
// was already open and the connection joined that session, false when this
// command opened it.
type OpenResult struct {
	SessionID   string `json:"sessionId"`
	SessionPath string `json:"sessionPath"`
	Attached    bool   `json:"attached"`
}

// SessionState is the data of get_state. Activity is nil when the runtime
// offers no activity snapshot. HostRequests counts the other host requests
// in flight for the session (this get_state excluded). State is the
// runtime's own view.
type SessionState struct {
	SessionID    string        `json:"sessionId"`
	SessionPath  string        `json:"sessionPath"`
	Attachments  int           `json:"attachments"`
	Busy         bool          `json:"busy"`
	Activity     *ActivityView `json:"activity,omitempty"`
	HostRequests int           `json:"hostRequests"`
	Draining     bool          `json:"draining"`
	State        any           `json:"state,omitempty"`
}

// ActivityView is engine.Activity on the wire.
type ActivityView struct {
	Turn        bool `json:"turn"`
	Tool        bool `json:"tool"`
	Compaction  bool `json:"compaction"`
	Queued      int  `json:"queued"`
	WakeSources int  `json:"wakeSources"`
}

func viewOf(a engine.Activity) *ActivityView {
	return &ActivityView{Turn: a.Turn, Tool: a.Tool, Compaction: a.Compaction, Queued: a.Queued, WakeSources: a.WakeSources}
}

// Record is any line a client reads: the union of the fields of responses
// and events. Raw holds the line as received.
type Record struct {
	Type        string          `json:"type"`
	ID          string          `json:"id,omitempty"`
	Command     string          `json:"command,omitempty"`
	Success     bool            `json:"success,omitempty"`
	Data        json.RawMessage `json:"data,omitempty"`
	Error       string          `json:"error,omitempty"`
	ErrorData   json.RawMessage `json:"errorData,omitempty"`
	SessionID   string          `json:"sessionId,omitempty"`
	SessionPath string          `json:"sessionPath,omitempty"`
	Reason      Reason          `json:"reason,omitempty"`
	InstanceID  string          `json:"instanceId,omitempty"`
	Generation  int             `json:"generation,omitempty"`
	Successor   *Successor      `json:"successor,omitempty"`
	Text        string          `json:"text,omitempty"`
	Raw         json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a record and keeps a copy of the line in Raw. It
// returns encoding/json's error for a line that is not a record.
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = Record(p)
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// IsResponse reports whether r answers a command.
func (r Record) IsResponse() bool { return r.Type == TypeResponse }

// Err returns nil for a successful response or any event, and a
// *RemoteError for a failed response.
func (r Record) Err() error {
	if r.Type != TypeResponse || r.Success {
		return nil
	}
	return &RemoteError{Command: r.Command, Code: r.Error, Data: r.ErrorData}
}

// DecodeData decodes the data of a successful response into v. It returns
// the *RemoteError of a failed response, or an EINTERNAL error when the
// data does not decode.
func (r Record) DecodeData(v any) error {
	if err := r.Err(); err != nil {
		return err
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return baton.Errorf(errRemote, "decode %s data: %v", r.Command, err)
	}
	return nil
}
