package host

import (
	"encoding/json"
	"errors"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// Errors of the protocol. Each maps to one stable wire code (in
// parentheses), and a Client turns a failed response back into the same
// sentinel, so errors.Is(err, ErrPathInUse) holds on both sides of the
// socket. Each is also matched by its code-level sentinel (baton.ErrInvalid,
// ...).
var (
	// ErrInvalidCommand: a line that is not a JSON object or is over the
	// line limit, a command with no type, an unknown type, or a missing
	// field (invalid_command).
	ErrInvalidCommand = baton.NewError(baton.ErrInvalid, "host: invalid command")
	// ErrInvalidPath: a session path (or cwd) that is not absolute, or
	// whose directory does not exist (invalid_path).
	ErrInvalidPath = baton.NewError(baton.ErrInvalid, "host: invalid session path")
	// ErrUnknownSession: a session handle this host never gave the
	// connection; a handle parked by a handoff never answers it
	// (unknown_session).
	ErrUnknownSession = baton.NewError(baton.ErrNotFound, "host: unknown session")
	// ErrPathInUse: the canonical path is reserved by a session that is
	// closing, or claimed by another live host generation. Its ErrorData is
	// {owner: {pid, instanceId, generation}, retry_after_ms: 2000}
	// (session_path_in_use).
	ErrPathInUse = baton.NewError(baton.ErrBusy, "host: session path in use")
	// ErrDraining: open_session on a host that is handing over to its
	// successor (host_draining).
	ErrDraining = baton.NewError(baton.ErrUnavailable, "host: host is draining")
	// ErrSessionClosed: a command for a handle whose session was parked or
	// closed; the session_closed record precedes it on the wire and is its
	// ErrorData (session_closed).
	ErrSessionClosed = baton.NewError(baton.ErrConflict, "host: session closed")
	// ErrRuntime: the runtime failed to open a session or to serve a
	// command (runtime_error).
	ErrRuntime = baton.NewError(baton.ErrUnavailable, "host: runtime failed")
	// ErrClosed: the host was closed, or a Client's connection ended before
	// the response arrived (host_closed).
	ErrClosed = baton.NewError(baton.ErrUnavailable, "host: closed")
	// errRemote is the base of a failed response whose code this package
	// does not know (a newer host), and of an undecodable one.
	errRemote = baton.NewError(baton.ErrInternal, "host: remote error")
)

// codeInternal is the wire code of an error no sentinel matches.
const codeInternal = "internal_error"

// wireCodes are the stable "error" strings of a failed response.
var wireCodes = []struct {
	err  *baton.Error
	code string
}{
	{ErrInvalidCommand, "invalid_command"},
	{ErrInvalidPath, "invalid_path"},
	{ErrUnknownSession, "unknown_session"},
	{ErrPathInUse, "session_path_in_use"},
	{ErrDraining, "host_draining"},
	{ErrSessionClosed, "session_closed"},
	{ErrRuntime, "runtime_error"},
	{ErrClosed, "host_closed"},
}

// codeOf returns the wire code of err: that of the first sentinel of this
// package in its chain, "" for nil, internal_error otherwise.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	for _, w := range wireCodes {
		if errors.Is(err, w.err) {
			return w.code
		}
	}
	return codeInternal
}

// dataError carries a failed response's errorData next to its sentinel: on
// the host, the value to encode; on a Client, the JSON received.
type dataError struct {
	err  error
	data any
}

func (e *dataError) Error() string { return e.err.Error() }
func (e *dataError) Unwrap() error { return e.err }

// ErrorData returns the errorData of a failed response, as JSON: for
// ErrPathInUse the holder and retry_after_ms, for ErrSessionClosed the
// session_closed record. It returns nil when err carries none.
func ErrorData(err error) json.RawMessage {
	var d *dataError
	if !errors.As(err, &d) {
		return nil
	}
	if raw, ok := d.data.(json.RawMessage); ok {
		return raw
	}
	raw, _ := json.Marshal(d.data)
	return raw
}

// remoteErr is the error of a failed response a Client received.
func remoteErr(r received) error {
	sentinel := errRemote
	for _, w := range wireCodes {
		if w.code == r.Error {
			sentinel = w.err
		}
	}
	err := baton.Errorf(sentinel, "%s failed: %s", r.Command, r.Error)
	if len(r.ErrorData) == 0 {
		return err
	}
	return &dataError{err: err, data: r.ErrorData}
}

// runtimeErr classifies a runtime's failure: one that wraps a sentinel of
// this package keeps it, any other becomes ErrRuntime.
func runtimeErr(err error) error {
	if codeOf(err) == codeInternal {
		return baton.Errorf(ErrRuntime, "%v", err)
	}
	return err
}

func pathInUse(owner wire.Owner, path string) error {
	return &dataError{
		err:  baton.Errorf(ErrPathInUse, "%s is held by pid %d (%s, generation %d)", path, owner.PID, owner.InstanceID, owner.Generation),
		data: wire.PathInUse{Owner: owner, RetryAfterMS: wire.RetryAfterMS},
	}
}
