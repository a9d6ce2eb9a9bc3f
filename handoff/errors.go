package handoff

import (
	"github.com/batonhq/baton"
)

// Errors returned by the Coordinator. Each is an *baton.Error: match it with
// errors.Is, or its code with baton.ErrorCode. The method that returns one
// says so in its documentation.
var (
	// ErrInvalidRequest: malformed input (request id, configuration, action,
	// report text, nil context). Nothing happened.
	ErrInvalidRequest = baton.NewError(baton.ErrInvalid, "invalid handoff request")
	// ErrIdempotencyMismatch: the request id was used before with another
	// request (another fingerprint).
	ErrIdempotencyMismatch = baton.NewError(baton.ErrConflict, "request id already used with a different request")
	// ErrTransferPending: another handoff is pending in the workspace.
	ErrTransferPending = baton.NewError(baton.ErrConflict, "another session transfer is pending in this workspace")
	// ErrSourceChanged: the request's source session is not the workspace's
	// current session any more.
	ErrSourceChanged = baton.NewError(baton.ErrConflict, "the source session is no longer the workspace's current session")
	// ErrNotFound: no such handoff in that workspace (a handoff of another
	// workspace is not found either).
	ErrNotFound = baton.NewError(baton.ErrNotFound, "handoff not found")
	// ErrNativeUnsupported: a native-path request (Request.Native) whose
	// target engine cannot carry the source's native session.
	ErrNativeUnsupported = baton.NewError(baton.ErrUnsupported, "the target engine cannot carry the source's native session")
	// ErrTransferRunning: retry or skip while the transfer is still running.
	ErrTransferRunning = baton.NewError(baton.ErrConflict, "the transfer is still running")
	// ErrStopUnconfirmed: retry or skip while a stop was not confirmed: a
	// process may still run; Stop again first.
	ErrStopUnconfirmed = baton.NewError(baton.ErrConflict, "a stop was not confirmed; stop again before retrying")
	// ErrGenerationInactive: a report for a handoff that is not generating a
	// report (or not any more).
	ErrGenerationInactive = baton.NewError(baton.ErrConflict, "no report is being generated for this handoff")
	// ErrTokenRejected: a report with a token that is not the current
	// attempt's generation token.
	ErrTokenRejected = baton.NewError(baton.ErrConflict, "generation token rejected")
	// ErrReportConflict: a different report was already stored for this
	// attempt (the same text again is accepted).
	ErrReportConflict = baton.NewError(baton.ErrConflict, "a different report was already submitted")
	// ErrClosed: the Coordinator was shut down.
	ErrClosed = baton.NewError(baton.ErrUnavailable, "coordinator shut down")
)

// errStaleAttempt refuses an engine callback of an attempt that is not the
// current one, or that arrived after a Stop was requested: never applied.
var errStaleAttempt = baton.NewError(baton.ErrStale, "callback of a stale attempt refused")
