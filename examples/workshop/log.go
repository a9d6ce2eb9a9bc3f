package main

import (
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"
)

type logKey struct{}

// reqLog returns the request's logger (with its request id), or nil.
func reqLog(r *http.Request) *zap.Logger {
	l, _ := r.Context().Value(logKey{}).(*zap.Logger)
	return l
}

// statusWriter records the status a handler wrote. It passes Flush through
// for the event stream.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// FlushError flushes and reports a failed write (a stalled or gone
// reader of an event stream), which Flush cannot.
func (w *statusWriter) FlushError() error {
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logged gives each request an id (X-Request-Id, echoed back; minted when
// absent or malformed) and logs it once done.
func (s *server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = randomID("req")
		}
		w.Header().Set("X-Request-Id", id)
		l := s.log.With(zap.String("request_id", id))
		r = r.WithContext(context.WithValue(r.Context(), logKey{}, l))
		sw := &statusWriter{ResponseWriter: w}
		start := time.Now()
		next.ServeHTTP(sw, r)
		if ce := l.Check(zap.InfoLevel, "request"); ce != nil {
			ce.Write(zap.String("method", r.Method), zap.String("path", r.URL.Path), zap.Int("status", sw.status),
				zap.Duration("duration", time.Since(start)))
		}
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
