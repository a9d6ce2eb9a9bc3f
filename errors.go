package baton

import (
	"context"
	"errors"
	"fmt"
)

// Error is baton's error value: a code and a human-readable message.
//
// Code is the Code of one of the code-level errors below (ErrInvalid,
// ErrNotFound, ...): a stable string, safe to send over a wire (the
// workshop example maps codes to HTTP statuses in one place). Package-level
// sentinels such as handoff.ErrTransferPending are *Error values; callers
// match them with errors.Is. An *Error with an empty Message matches every
// error with the same code, so errors.Is(err, baton.ErrInvalid) asks "is
// this an invalid-input error?" whatever its case.
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
	return ok && (t == e || t.Message == "" && t.Code == e.Code)
}

// Code-level errors. Every error returned by a baton package carries the
// Code of exactly one of them; ErrorCode extracts it, and
// errors.Is(err, baton.ErrNotFound) matches every error of that code,
// whichever package returned it.
var (
	ErrInvalid     = &Error{Code: "invalid"}     // the input is malformed; nothing happened
	ErrNotFound    = &Error{Code: "not-found"}   // the named thing does not exist (or is not yours)
	ErrConflict    = &Error{Code: "conflict"}    // the request contradicts the current state
	ErrBusy        = &Error{Code: "busy"}        // the workspace is reserved by someone else
	ErrStale       = &Error{Code: "stale"}       // the caller acted on an outdated view (attempt, epoch, source)
	ErrUnavailable = &Error{Code: "unavailable"} // a dependency (engine, store) could not do it now; may be retried
	ErrUnsupported = &Error{Code: "unsupported"} // the configuration or capability is not offered
	ErrInternal    = &Error{Code: "internal"}    // a bug or an unclassified failure
)

// NewError returns a sentinel with code's Code (code is one of the
// code-level errors, ErrInvalid, ...) and message. Packages declare their
// sentinels with it; it is not meant for one-off errors (use Errorf for
// those).
func NewError(code *Error, message string) *Error { return &Error{Code: code.Code, Message: message} }

// Errorf returns an error that wraps base (usually a sentinel) with a
// formatted detail. errors.Is(err, base) holds and ErrorCode(err) is base's
// code.
func Errorf(base *Error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", base, fmt.Sprintf(format, args...))
}

// ErrorCode returns the code of err: the code of the first *Error in its
// chain, "" for a nil err, and ErrInternal's for any other error. A context
// cancellation or deadline reports ErrUnavailable's.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ErrUnavailable.Code
	}
	return ErrInternal.Code
}
