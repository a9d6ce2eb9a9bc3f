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
	ErrInvalidRequest = baton.NewError(baton.EINVALID, "invalid handoff request")
	// ErrIdempotencyMismatch: the request id was used before with another
	// request (another fingerprint).
	ErrIdempotencyMismatch = baton.NewError(baton.ECONFLICT, "request id already used with a different request")
	// ErrTransferPending: another handoff is pending in the workspace.
	ErrTransferPending = baton.NewError(baton.ECONFLICT, "another session transfer is pending in this workspace")
	// ErrSourceChanged: the request's source session is not the workspace's
	// current session any more.
	ErrSourceChanged = baton.NewError(baton.ECONFLICT, "the source session is no longer the workspace's current session")
	// ErrNotFound: no such handoff in that workspace (a handoff of another
	// workspace is not found either).
	ErrNotFound = baton.NewError(baton.ENOTFOUND, "handoff not found")
	// ErrNativeUnsupported: a native-path request (Request.Native) whose
	// target engine cannot carry the source's native session.
	ErrNativeUnsupported = baton.NewError(baton.EUNSUPPORTED, "the target engine cannot carry the source's native session")
	// ErrTransferRunning: retry or skip while the transfer is still running.
	ErrTransferRunning = baton.NewError(baton.ECONFLICT, "the transfer is still running")
	// ErrStopUnconfirmed: retry or skip while a stop was not confirmed: a
	// process may still run; Stop again first.
	ErrStopUnconfirmed = baton.NewError(baton.ECONFLICT, "a stop was not confirmed; stop again before retrying")
	// ErrGenerationInactive: a report for a handoff that is not generating a
	// report (or not any more).
	ErrGenerationInactive = baton.NewError(baton.ECONFLICT, "no report is being generated for this handoff")
	// ErrTokenRejected: a report with a token that is not the current
	// attempt's generation token.
	ErrTokenRejected = baton.NewError(baton.ECONFLICT, "generation token rejected")
	// ErrReportConflict: a different report was already stored for this
	// attempt (the same text again is accepted).
	ErrReportConflict = baton.NewError(baton.ECONFLICT, "a different report was already submitted")
	// ErrClosed: the Coordinator was shut down.
	ErrClosed = baton.NewError(baton.EUNAVAILABLE, "coordinator shut down")
)

// errStaleAttempt refuses an engine callback of an attempt that is not the
// current one, or that arrived after a Stop was requested: never applied.
var errStaleAttempt = baton.NewError(baton.ESTALE, "callback of a stale attempt refused")
