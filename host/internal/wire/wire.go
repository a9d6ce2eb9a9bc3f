// Package wire is the one encoding of the host protocol (documented in
// package host): the shapes of commands and records, their type names, and
// a bounded reader of JSON lines. The host, its Client and their tests
// share it; the error codes are package host's (host.go).
package wire

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"maps"
)

// Command types.
const (
	CmdGetProtocolInfo = "get_protocol_info"
	CmdOpenSession     = "open_session"
	CmdPrompt          = "prompt"
	CmdGetState        = "get_state"
	CmdAbort           = "abort"
	CmdCloseSession    = "close_session"
)

// Record types: the response to a command, and the host's own events
// (a runtime names its events: agent_start, agent_settled, message).
const (
	TypeResponse        = "response"
	EventSessionClosed  = "session_closed"
	EventHostSuperseded = "host_superseded"
)

// The reasons of session_closed.
const (
	ReasonClientClose   = "client_close"
	ReasonIdleEvicted   = "idle_evicted"
	ReasonHostShutdown  = "host_shutdown"
	ReasonHandoffParked = "handoff_parked"
	ReasonError         = "error"
)

// RetryAfterMS is the retry_after_ms of every session_path_in_use answer.
const RetryAfterMS = 2000

// MaxLineBytes is the longest line read unless told otherwise.
const MaxLineBytes = 1 << 20

// Command is one command line; fields a command does not use are empty.
type Command struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	SessionID   string `json:"sessionId,omitempty"`
	SessionPath string `json:"sessionPath,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	Text        string `json:"text,omitempty"`
}

// Response answers one command: Data on success, Error (a code) and
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

// Superseded is host_superseded; Successor encodes as null when unknown.
type Superseded struct {
	Type       string     `json:"type"`
	InstanceID string     `json:"instanceId"`
	Generation int        `json:"generation"`
	Successor  *Successor `json:"successor"`
}

// Closed is session_closed, the terminal record of a session on a
// connection, and the errorData of a session_closed failure.
type Closed struct {
	Type        string `json:"type"`
	SessionID   string `json:"sessionId"`
	Reason      string `json:"reason"`
	SessionPath string `json:"sessionPath"`
}

// Owner names a host generation.
type Owner struct {
	PID        int    `json:"pid"`
	InstanceID string `json:"instanceId"`
	Generation int    `json:"generation"`
}

// PathInUse is the errorData of session_path_in_use.
type PathInUse struct {
	Owner        Owner `json:"owner"`
	RetryAfterMS int   `json:"retry_after_ms"`
}

// Opened is the data of open_session.
type Opened struct {
	SessionID   string `json:"sessionId"`
	SessionPath string `json:"sessionPath"`
	Attached    bool   `json:"attached"`
}

// Accepted is the data of prompt and abort.
type Accepted struct {
	SessionID string `json:"sessionId"`
}

// CloseResult is the data of close_session: Closed is false when only the
// connection detached, true when the session itself closed.
type CloseResult struct {
	SessionID string `json:"sessionId"`
	Closed    bool   `json:"closed"`
}

// State is the data of get_state.
type State struct {
	SessionID    string    `json:"sessionId"`
	SessionPath  string    `json:"sessionPath"`
	Attachments  int       `json:"attachments"`
	Busy         bool      `json:"busy"`
	Activity     *Activity `json:"activity,omitempty"`
	HostRequests int       `json:"hostRequests"`
	Draining     bool      `json:"draining"`
	State        any       `json:"state,omitempty"`
}

// Activity is engine.Activity on the wire.
type Activity struct {
	Turn        bool `json:"turn"`
	Tool        bool `json:"tool"`
	Compaction  bool `json:"compaction"`
	Queued      int  `json:"queued"`
	WakeSources int  `json:"wakeSources"`
}

// ErrLineTooLong is what a Lines func returns for a line over its limit:
// the scanner's own error.
var ErrLineTooLong = bufio.ErrTooLong

// Lines reads JSON lines from r, refusing lines over max bytes (max <= 0
// means MaxLineBytes). Each call of the returned func, which is not safe for
// concurrent use, returns the next non-empty line without its newline,
// valid until the following call. It returns io.EOF at the end of the
// stream (a last line without a newline is still returned first),
// ErrLineTooLong for a line over the limit (the stream is then unusable),
// or the reader's error.
func Lines(r io.Reader, max int) func() ([]byte, error) {
	if max <= 0 {
		max = MaxLineBytes
	}
	sc := bufio.NewScanner(r)
	// The buffer holds a line and its newline; its capacity must not exceed
	// the limit, which the scanner would take instead.
	sc.Buffer(make([]byte, 0, min(max+1, 64<<10)), max+1)
	return func() ([]byte, error) {
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				return line, nil
			}
		}
		return nil, cmp.Or(sc.Err(), io.EOF)
	}
}

// MarshalLine encodes v as one JSON line, newline included. HTML characters
// are not escaped, and encoding/json escapes every newline inside strings,
// so the result is exactly one line.
func MarshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MustLine is MarshalLine for a command or record built of these types,
// which always encode: a failure is a bug.
func MustLine(v any) []byte {
	b, err := MarshalLine(v)
	if err != nil {
		panic("host: encode record: " + err.Error())
	}
	return b
}

// EventLine encodes a runtime's event of session sessionID as one flat
// line. The fields cannot forge the record: "type", "sessionId" and "id"
// are the host's.
func EventLine(typ, sessionID string, fields map[string]any) ([]byte, error) {
	m := make(map[string]any, len(fields)+2)
	maps.Copy(m, fields)
	delete(m, "id")
	m["type"] = typ
	m["sessionId"] = sessionID
	return MarshalLine(m)
}
