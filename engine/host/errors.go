package host

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/batonhq/baton"
)

// Errors returned by this package. Match them with errors.Is; each is also
// matched by its code-level sentinel (baton.ErrInvalid, ...). Each maps to
// one stable wire code (see WireCode), so a Client turns a failed response
// back into the same sentinel.
var (
	// ErrInvalidCommand: a line that is not a JSON object, a command with
	// no type, an unknown type, or a missing field. Wire code
	// "invalid_command".
	ErrInvalidCommand = baton.NewError(baton.EINVALID, "host: invalid command")
	// ErrInvalidPath: a session path (or cwd) that is not absolute, or
	// whose directory does not exist. Wire code "invalid_path".
	ErrInvalidPath = baton.NewError(baton.EINVALID, "host: invalid session path")
	// ErrUnknownSession: a session handle this host never gave the
	// connection. A handle parked by a generation handoff never answers it.
	// Wire code "unknown_session".
	ErrUnknownSession = baton.NewError(baton.ENOTFOUND, "host: unknown session")
	// ErrPathInUse: the canonical path is reserved by a session that is
	// closing, or claimed by another live host generation. Its errorData is
	// a PathInUse. Wire code "session_path_in_use".
	ErrPathInUse = baton.NewError(baton.EBUSY, "host: session path in use")
	// ErrDraining: open_session on a host that is handing over to its
	// successor. Wire code "host_draining".
	ErrDraining = baton.NewError(baton.EUNAVAILABLE, "host: host is draining")
	// ErrSessionClosed: a command for a handle whose session was parked or
	// closed; the session_closed record precedes it on the wire. Its
	// errorData is a SessionClosed. Wire code "session_closed".
	ErrSessionClosed = baton.NewError(baton.ECONFLICT, "host: session closed")
	// ErrRuntime: the runtime failed to open a session or to serve a
	// command. Wire code "runtime_error".
	ErrRuntime = baton.NewError(baton.EUNAVAILABLE, "host: runtime failed")
	// ErrClosed: the host was closed, or a Client's connection ended before
	// the response arrived. Wire code "host_closed".
	ErrClosed = baton.NewError(baton.EUNAVAILABLE, "host: closed")
	// ErrInvalidOptions: New was given a nil runtime or an out-of-range
	// option. No host was created.
	ErrInvalidOptions = baton.NewError(baton.EINVALID, "host: invalid options")
	// ErrAlreadyServing: Serve was called a second time.
	ErrAlreadyServing = baton.NewError(baton.ECONFLICT, "host: already serving")
	// ErrLineTooLong: a JSON line over the configured limit. The
	// connection that sent it is closed.
	ErrLineTooLong = baton.NewError(baton.EINVALID, "host: line too long")
	// errRemote is the base of a RemoteError whose code this package does
	// not know (a newer host).
	errRemote = baton.NewError(baton.EINTERNAL, "host: remote error")
)

// Wire error codes: the stable "error" strings of a failed response.
const (
	CodeInvalidCommand = "invalid_command"
	CodeInvalidPath    = "invalid_path"
	CodeUnknownSession = "unknown_session"
	CodePathInUse      = "session_path_in_use"
	CodeDraining       = "host_draining"
	CodeSessionClosed  = "session_closed"
	CodeRuntime        = "runtime_error"
	CodeClosed         = "host_closed"
	CodeInternal       = "internal_error"
)

var wireCodes = []struct {
	err  *baton.Error
	code string
}{
	{ErrInvalidCommand, CodeInvalidCommand},
	{ErrLineTooLong, CodeInvalidCommand},
	{ErrInvalidPath, CodeInvalidPath},
	{ErrUnknownSession, CodeUnknownSession},
	{ErrPathInUse, CodePathInUse},
	{ErrDraining, CodeDraining},
	{ErrSessionClosed, CodeSessionClosed},
	{ErrRuntime, CodeRuntime},
	{ErrClosed, CodeClosed},
}

// WireCode returns the wire code of err: the code of the first sentinel of
// this package in its chain, "" for nil, and "internal_error" otherwise.
func WireCode(err error) string {
	if err == nil {
		return ""
	}
	for _, w := range wireCodes {
		if errors.Is(err, w.err) {
			return w.code
		}
	}
	return CodeInternal
}

func sentinelOf(code string) *baton.Error {
	for _, w := range wireCodes {
		if w.code == code {
			return w.err
		}
	}
	return errRemote
}

// PathInUse is the errorData of session_path_in_use: who holds the path,
// and when to try again.
type PathInUse struct {
	Owner        Owner `json:"owner"`
	RetryAfterMS int   `json:"retry_after_ms"`
}

// Owner names a host generation: the process, its instance id and its
// generation number.
type Owner struct {
	PID        int    `json:"pid"`
	InstanceID string `json:"instanceId"`
	Generation int    `json:"generation"`
}

// dataError carries a wire errorData next to its sentinel.
type dataError struct {
	err  error
	data any
}

func (e *dataError) Error() string { return e.err.Error() }
func (e *dataError) Unwrap() error { return e.err }

func withData(err error, data any) error { return &dataError{err: err, data: data} }

// errorData returns the errorData attached to err, or nil.
func errorData(err error) any {
	var d *dataError
	if errors.As(err, &d) {
		return d.data
	}
	return nil
}

func pathInUse(owner Owner, path string) error {
	return withData(baton.Errorf(ErrPathInUse, "%s is held by pid %d (%s, generation %d)", path, owner.PID, owner.InstanceID, owner.Generation),
		PathInUse{Owner: owner, RetryAfterMS: RetryAfterMS})
}

// RemoteError is a failed response as a Client sees it. It unwraps to the
// sentinel of its code, so errors.Is(err, host.ErrPathInUse) holds on the
// client side as on the host side; a code this package does not know
// unwraps to an EINTERNAL error.
type RemoteError struct {
	Command string          // the command that failed
	Code    string          // the wire code
	Data    json.RawMessage // errorData, when the host sent one
}

func (e *RemoteError) Error() string {
	if len(e.Data) > 0 {
		return fmt.Sprintf("host: %s failed: %s %s", e.Command, e.Code, e.Data)
	}
	return fmt.Sprintf("host: %s failed: %s", e.Command, e.Code)
}

// Unwrap returns the sentinel of e.Code.
func (e *RemoteError) Unwrap() error { return sentinelOf(e.Code) }

// PathInUse decodes the errorData of a session_path_in_use failure; ok is
// false for any other code or undecodable data.
func (e *RemoteError) PathInUse() (p PathInUse, ok bool) {
	if e.Code != CodePathInUse || json.Unmarshal(e.Data, &p) != nil {
		return PathInUse{}, false
	}
	return p, true
}
