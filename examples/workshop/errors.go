package main

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

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
	{session.ErrArchived, http.StatusConflict, "workspace-archived"},
	{session.ErrWorkspaceBusy, http.StatusConflict, "workspace-busy"},
	{session.ErrSessionRunning, http.StatusConflict, "session-running"},
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
	baton.ErrInvalid.Code:     {http.StatusBadRequest, "invalid-request"},
	baton.ErrUnsupported.Code: {http.StatusBadRequest, "invalid-request"},
	baton.ErrNotFound.Code:    {http.StatusNotFound, "not-found"},
	baton.ErrConflict.Code:    {http.StatusConflict, "conflict"},
	baton.ErrBusy.Code:        {http.StatusConflict, "workspace-busy"},
	baton.ErrStale.Code:       {http.StatusConflict, "stale"},
	baton.ErrUnavailable.Code: {http.StatusServiceUnavailable, "unavailable"},
	baton.ErrInternal.Code:    {http.StatusInternalServerError, "internal"},
}

// conflictAs answers the one conflict (baton.ErrConflict) an endpoint can
// meet under a wire code of its own: an instruction's resend refused
// because it was cancelled, its cancel because it was delivered.
func conflictAs(err error, code string) error {
	if errors.Is(err, baton.ErrConflict) {
		return &apiError{http.StatusConflict, code, err.Error()}
	}
	return err
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

// publicMessage is what an error answer says. A 5xx the server did not
// phrase itself (a store, engine or system error) may name files, hosts
// or commands: the client gets a generic message with the request id,
// and the details go to the log (writeErr).
func publicMessage(err error, status int, code string, requestID string) string {
	var ae *apiError
	if status < 500 || errors.As(err, &ae) {
		return err.Error()
	}
	what := "internal error"
	switch code {
	case "unavailable":
		what = "the service cannot do this now (see /readyz)"
	case "engine-failed":
		what = "the engine failed"
	}
	return what + " (request id " + requestID + "; the details are in the server log)"
}

// statusCodes names the wire code of an error status the server's router
// or a library answers by itself (http.Error: text/plain).
var statusCodes = map[int]string{
	http.StatusBadRequest:            "invalid-request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not-found",
	http.StatusMethodNotAllowed:      "method-not-allowed",
	http.StatusNotAcceptable:         "not-acceptable",
	http.StatusRequestTimeout:        "request-timeout",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "too-large",
	http.StatusUnsupportedMediaType:  "unsupported-media-type",
	http.StatusTooManyRequests:       "too-many-requests",
	http.StatusServiceUnavailable:    "unavailable",
}

// jsonErrors makes every error answer JSON {error, code}: an answer of
// status 400 or more that is not already JSON (the router's 404 and 405,
// the MCP handler's http.Error answers) is replaced, keeping its status
// and headers (Allow, WWW-Authenticate) and, below 500, its text.
func jsonErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jw := &jsonErrorWriter{ResponseWriter: w}
		next.ServeHTTP(jw, r)
		jw.finish()
	})
}

// jsonErrorWriter holds back a non-JSON error answer for jsonErrors.
type jsonErrorWriter struct {
	http.ResponseWriter
	wrote   bool
	status  int // of a held-back answer
	held    []byte
	replace bool
}

func (w *jsonErrorWriter) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.wrote = true
	ct := w.Header().Get("Content-Type")
	if code >= 400 && !strings.HasPrefix(ct, "application/json") {
		w.replace, w.status = true, code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.replace {
		if room := 512 - len(w.held); room > 0 {
			w.held = append(w.held, b[:min(len(b), room)]...)
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *jsonErrorWriter) Flush() {
	if w.replace {
		return
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// FlushError is Flush, reporting a failed write (see statusWriter).
func (w *jsonErrorWriter) FlushError() error {
	if w.replace {
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *jsonErrorWriter) finish() {
	if !w.replace {
		return
	}
	code, ok := statusCodes[w.status]
	if !ok {
		code = "internal"
		if w.status < 500 {
			code = "invalid-request"
		}
	}
	msg := strings.TrimSpace(string(w.held))
	switch {
	case w.status == http.StatusNotFound && (msg == "" || msg == "404 page not found"):
		msg = "no such resource"
	case w.status == http.StatusMethodNotAllowed:
		msg = "method not allowed"
		if a := w.Header().Get("Allow"); a != "" {
			msg += "; allowed: " + a
		}
	case w.status >= 500 || !utf8.ValidString(msg):
		msg = http.StatusText(w.status)
	}
	h := w.Header()
	h.Del("Content-Length")
	writeJSON(w.ResponseWriter, w.status, map[string]string{"error": msg, "code": code})
}
