package main

import (
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
)

// loopbackHost reports whether host (no port) names the loopback interface.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// allowedHosts is the Host allowlist: the listen host, the loopback names
// (a rebinding page arrives under its own name, never under these), and
// the configured extra names.
func allowedHosts(listenHost string, extra []string) map[string]bool {
	m := map[string]bool{}
	add := func(h string) {
		if h = strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")); h != "" {
			m[h] = true
		}
	}
	add(listenHost)
	add("localhost")
	add("127.0.0.1")
	add("::1")
	for _, h := range extra {
		add(h)
	}
	return m
}

// hostOf strips the port from a Host header value.
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(strings.Trim(h, "[]"))
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}

func mutating(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	return true
}

// secure refuses, before any handler runs:
//   - a Host outside the allowlist (a DNS-rebinding page reaches us under
//     its own name): 403 forbidden-host;
//   - without the bearer token when one is configured: 401 unauthorized
//     (the page's static files and the health checks excepted);
//   - on a mutating method, an Origin header other than the server's own
//     (403 forbidden-origin), and a body that is not application/json
//     (415 unsupported-media-type), so that a cross-origin page can neither
//     post a simple form nor pass the preflight a JSON post needs.
//
// A preflight (OPTIONS) is never answered with CORS headers, so browsers
// refuse cross-origin JSON requests.
func (s *server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hosts[hostOf(r.Host)] {
			writeErr(w, r, &apiError{http.StatusForbidden, "forbidden-host", "host " + r.Host + " is not served here"})
			return
		}
		if s.cfg.Token != "" && needsToken(r.URL.Path) && !agent.BearerOK(r, baton.ParseToken(s.cfg.Token)) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="baton workshop"`)
			writeErr(w, r, &apiError{http.StatusUnauthorized, "unauthorized", "a bearer token is required"})
			return
		}
		if mutating(r.Method) {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r) {
				writeErr(w, r, &apiError{http.StatusForbidden, "forbidden-origin", "cross-origin request refused"})
				return
			}
			if hasBody(r) && !isJSON(r.Header.Get("Content-Type")) {
				writeErr(w, r, &apiError{http.StatusUnsupportedMediaType, "unsupported-media-type", "a body must be application/json"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// needsToken: the API and the MCP endpoint (one door), everything but the
// page's files and the health checks.
func needsToken(path string) bool {
	return strings.HasPrefix(path, "/api/") || path == agent.MCPPath
}

// sameOrigin: the Origin is this server as the request reached it.
func sameOrigin(origin string, r *http.Request) bool {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(origin, scheme+"://"+r.Host)
}

func hasBody(r *http.Request) bool { return r.ContentLength != 0 }

func isJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// bodyDeadline bounds the reading of a request body to cfg.BodyTimeout
// from the start of the handler: a client that trickles its body is cut
// off (408 request-timeout, see decode) instead of holding a connection
// and a goroutine. The deadline is lifted once the body is read, so that
// it never cuts a long answer (the server's background read of the
// connection would cancel the request).
func (s *server) bodyDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasBody(r) {
			rc := http.NewResponseController(w)
			if err := rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline once its body ends.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.lifted {
		b.lifted = true
		if errors.Is(err, io.EOF) {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

// timedOut reports whether err is a read that hit a deadline.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
