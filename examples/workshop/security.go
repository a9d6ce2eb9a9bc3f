package main

import (
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"strings"
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
		if s.cfg.Token != "" && needsToken(r.URL.Path) && !bearerOK(r, s.cfg.Token) {
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

// needsToken: everything but the page's files and the health checks.
func needsToken(path string) bool {
	return strings.HasPrefix(path, "/api/")
}

func bearerOK(r *http.Request, token string) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
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
