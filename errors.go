package baton

import (
	"context"
	"errors"
	"fmt"
)

// Error codes. Every error returned by a baton package carries exactly one of
// them; [ErrorCode] extracts it. They are stable strings, safe to send over a
// wire (the workshop example maps them to HTTP statuses in one place).
const (
	EINVALID     = "invalid"     // the input is malformed; nothing happened
	ENOTFOUND    = "not-found"   // the named thing does not exist (or is not yours)
	ECONFLICT    = "conflict"    // the request contradicts the current state
	EBUSY        = "busy"        // the workspace is reserved by someone else
	ESTALE       = "stale"       // the caller acted on an outdated view (attempt, epoch, source)
	EUNAVAILABLE = "unavailable" // a dependency (engine, store) could not do it now; may be retried
	EUNSUPPORTED = "unsupported" // the configuration or capability is not offered
	EINTERNAL    = "internal"    // a bug or an unclassified failure
)

// Error is baton's error value: a code and a human-readable message.
//
// Package-level sentinels such as handoff.ErrTransferPending are *Error
// values; callers match them with errors.Is. An *Error with an empty Message
// matches every error with the same code, so errors.Is(err, baton.ErrInvalid)
// asks "is this an EINVALID error?" whatever its case.
type Error struct {
	Code    string
	Message string
}

// Error returns the message, or "baton: " and the code when the message is
// empty.
func (e *Error) Error() string {
	if e.Message == "" {
		return "baton: " + e.Code
	}
	return e.Message
}

// Is reports whether target is the same sentinel, or a code-only *Error
// (empty Message) with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if t == e {
		return true
	}
	return t.Message == "" && t.Code == e.Code
}

// Code-level sentinels: errors.Is(err, baton.ErrNotFound) matches every
// ENOTFOUND error, whichever package returned it.
var (
	ErrInvalid     = &Error{Code: EINVALID}
	ErrNotFound    = &Error{Code: ENOTFOUND}
	ErrConflict    = &Error{Code: ECONFLICT}
	ErrBusy        = &Error{Code: EBUSY}
	ErrStale       = &Error{Code: ESTALE}
	ErrUnavailable = &Error{Code: EUNAVAILABLE}
	ErrUnsupported = &Error{Code: EUNSUPPORTED}
	ErrInternal    = &Error{Code: EINTERNAL}
)

// ErrOptionConflict: a constructor (session.New, handoff.New) was given an
// option twice, or an option another one makes meaningless (a handoff
// option the shared session service of handoff.WithSessions decides).
// Nothing was built. It matches ErrInvalid.
var ErrOptionConflict = NewError(EINVALID, "conflicting options")

// NewError returns a sentinel with the given code and message. Packages
// declare their sentinels with it; it is not meant for one-off errors (use
// Errorf for those).
func NewError(code, message string) *Error { return &Error{Code: code, Message: message} }

// Errorf returns an error that wraps base (usually a sentinel) with a
// formatted detail. errors.Is(err, base) holds and ErrorCode(err) is base's
// code.
func Errorf(base *Error, format string, args ...any) error {
	return &wrapped{base: base, msg: base.Error() + ": " + fmt.Sprintf(format, args...)}
}

type wrapped struct {
	base *Error
	msg  string
}

func (w *wrapped) Error() string { return w.msg }
func (w *wrapped) Unwrap() error { return w.base }

// ErrorCode returns the code of err: the code of the first *Error in its
// chain, "" for a nil err, and EINTERNAL for any other error. A context
// cancellation or deadline reports EUNAVAILABLE.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return EUNAVAILABLE
	}
	return EINTERNAL
}
