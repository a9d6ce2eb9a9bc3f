package main

import (
	"errors"
	"net/http"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// apiError is an error the server answers with its own status and code
// (request shape, size, media type, security).
type apiError struct {
	status int
	code   string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errBadRequest(msg string) error { return &apiError{http.StatusBadRequest, "invalid-request", msg} }

// errorMapping is the one place that turns baton's sentinels and codes
// into HTTP statuses and wire codes. Sentinels are tried in order (the most
// specific first), then the error's baton code.
var errorMapping = []struct {
	err    error
	status int
	code   string
}{
	{handoff.ErrIdempotencyMismatch, http.StatusConflict, "idempotency-mismatch"},
	{handoff.ErrTransferPending, http.StatusConflict, "transfer-pending"},
	{handoff.ErrSourceChanged, http.StatusConflict, "source-changed"},
	{handoff.ErrTransferRunning, http.StatusConflict, "transfer-running"},
	{handoff.ErrStopUnconfirmed, http.StatusConflict, "stop-unconfirmed"},
	// A wrong token is answered like a wrong state: the caller learns
	// nothing about which tokens exist.
	{handoff.ErrTokenRejected, http.StatusConflict, "generation-inactive"},
	{handoff.ErrGenerationInactive, http.StatusConflict, "generation-inactive"},
	{handoff.ErrReportConflict, http.StatusConflict, "report-conflict"},
	{handoff.ErrWorkspaceArchived, http.StatusConflict, "workspace-archived"},
	{session.ErrArchived, http.StatusConflict, "workspace-archived"},
	{session.ErrWorkspaceBusy, http.StatusConflict, "workspace-busy"},
	{session.ErrStaleEpoch, http.StatusConflict, "workspace-busy"},
	{session.ErrSessionRunning, http.StatusConflict, "session-running"},
	{session.ErrInstructionCancelled, http.StatusConflict, "instruction-cancelled"},
	{session.ErrInstructionDelivered, http.StatusConflict, "instruction-delivered"},
	{handoff.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
	{session.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
	{store.ErrClosed, http.StatusServiceUnavailable, "unavailable"},
	{engine.ErrReadyRejected, http.StatusBadGateway, "engine-failed"},
	{engine.ErrExitedBeforeReady, http.StatusBadGateway, "engine-failed"},
	{engine.ErrAuth, http.StatusBadGateway, "engine-failed"},
	{engine.ErrSessionMissing, http.StatusBadGateway, "engine-failed"},
}

// byCode answers the errors no sentinel above names.
var byCode = map[string]struct {
	status int
	code   string
}{
	baton.EINVALID:     {http.StatusBadRequest, "invalid-request"},
	baton.EUNSUPPORTED: {http.StatusBadRequest, "invalid-request"},
	baton.ENOTFOUND:    {http.StatusNotFound, "not-found"},
	baton.ECONFLICT:    {http.StatusConflict, "conflict"},
	baton.EBUSY:        {http.StatusConflict, "workspace-busy"},
	baton.ESTALE:       {http.StatusConflict, "stale"},
	baton.EUNAVAILABLE: {http.StatusServiceUnavailable, "unavailable"},
	baton.EINTERNAL:    {http.StatusInternalServerError, "internal"},
}

// httpError returns the status and wire code of err.
func httpError(err error) (int, string) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.status, ae.code
	}
	for _, m := range errorMapping {
		if errors.Is(err, m.err) {
			return m.status, m.code
		}
	}
	if c, ok := byCode[baton.ErrorCode(err)]; ok {
		return c.status, c.code
	}
	return http.StatusInternalServerError, "internal"
}
