package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
)

// TestSecurityOverHTTP: a cross-origin POST, a form-encoded POST and a
// rebinding Host are refused by the running binary; its own origin and
// requests without Origin (curl) are served; a preflight gets no CORS
// grant.
func TestSecurityOverHTTP(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	body := map[string]any{"name": "x", "engine": "demo", "model": "demo-1"}
	for _, c := range []struct {
		name   string
		method string
		path   string
		body   any
		hdr    []string
		status int
		code   string
	}{
		{"cross-origin POST", "POST", "/api/workspaces", body, []string{"Origin", "http://evil.example"}, 403, "forbidden-origin"},
		{"cross-origin DELETE", "DELETE", "/api/workspaces/w/instructions/i", nil, []string{"Origin", "http://evil.example"}, 403, "forbidden-origin"},
		{"origin on another port", "POST", "/api/workspaces", body, []string{"Origin", "http://127.0.0.1:1"}, 403, "forbidden-origin"},
		{"form-encoded POST", "POST", "/api/workspaces", "name=x&engine=demo", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, "unsupported-media-type"},
		{"text/plain POST", "POST", "/api/workspaces", `{"name":"x"}`, []string{"Content-Type", "text/plain"}, 415, "unsupported-media-type"},
		{"rebinding Host", "GET", "/api/workspaces", nil, []string{"Host", "evil.example"}, 403, "forbidden-host"},
		{"rebinding Host with port", "POST", "/api/workspaces", body, []string{"Host", "attacker.test:" + strings.Split(p.addr, ":")[1]}, 403, "forbidden-host"},
		{"same origin", "POST", "/api/workspaces", body, []string{"Origin", p.base}, 201, ""},
		{"no origin (curl)", "POST", "/api/workspaces", body, nil, 201, ""},
		{"localhost Host", "GET", "/api/workspaces", nil, []string{"Host", "localhost:" + strings.Split(p.addr, ":")[1]}, 200, ""},
	} {
		r := p.do(c.method, c.path, c.body, c.hdr...)
		if r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
		}
	}
	r := p.do("OPTIONS", "/api/workspaces", nil, "Origin", "http://evil.example", "Access-Control-Request-Method", "POST")
	if v := r.Header.Get("Access-Control-Allow-Origin"); v != "" {
		t.Errorf("preflight granted %q", v)
	}
	if r := p.do("GET", "/", nil); !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("page CSP = %q", r.Header.Get("Content-Security-Policy"))
	}
	if id := p.do("GET", "/healthz", nil, "X-Request-Id", "abc-123").Header.Get("X-Request-Id"); id != "abc-123" {
		t.Errorf("request id echoed as %q", id)
	}
}

// TestRefusesToStart: beyond loopback without a token, and on a
// PostgreSQL store it cannot reach, the binary exits with code 2 before
// serving.
func TestRefusesToStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"non-loopback bind without a token", []string{"-addr", "0.0.0.0:0"}, nil, "without a bearer token"},
		{"postgres store out of reach", []string{"-addr", "127.0.0.1:0", "-store", "postgres://127.0.0.1:1/baton"}, nil, "-store postgres://"},
		{"bad log level", []string{"-log-level", "loud"}, nil, "-log-level"},
		{"pressure threshold over 1", []string{"-pressure-threshold", "1.5"}, nil, "-pressure-threshold"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(binPath, append(c.args, "-data", t.TempDir())...)
			cmd.Env = append(append([]string{}, c.env...), "BATON_TOKEN=", "PATH=/usr/bin:/bin")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 {
				t.Fatalf("exit = %v, want code 2; output:\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("output %q lacks %q", out.String(), c.want)
			}
		})
	}
}

// TestBearerToken: with a token configured (as beyond loopback), /api/
// and /mcp need it (one door); the health checks and the page do not; a wrong token is
// refused.
func TestBearerToken(t *testing.T) {
	s := &server{cfg: config{Token: "s3cret-token"}, hosts: allowedHosts("10.0.0.5", nil)}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := s.secure(ok)
	for _, c := range []struct {
		name, path, auth, host string
		want                   int
	}{
		{"no token", "/api/workspaces", "", "10.0.0.5:8080", 401},
		{"wrong token", "/api/workspaces", "Bearer nope", "10.0.0.5:8080", 401},
		{"basic auth", "/api/workspaces", "Basic czNjcmV0LXRva2Vu", "10.0.0.5:8080", 401},
		{"right token", "/api/workspaces", "Bearer s3cret-token", "10.0.0.5:8080", 418},
		{"mcp without token", "/mcp", "", "10.0.0.5:8080", 401},
		{"mcp wrong token", "/mcp", "Bearer nope", "10.0.0.5:8080", 401},
		{"mcp right token", "/mcp", "Bearer s3cret-token", "10.0.0.5:8080", 418},
		{"health without token", "/healthz", "", "10.0.0.5:8080", 418},
		{"loopback name", "/healthz", "", "localhost:8080", 418},
		{"another name", "/healthz", "", "evil.example:8080", 403},
	} {
		req := httptest.NewRequest("GET", c.path, nil)
		req.Host = c.host
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, rec.Code, rec.Body.String(), c.want)
		}
	}
}

// TestLoopbackAddr: where the agent CLIs reach the MCP endpoint of a
// listener: itself on loopback, loopback on every interface; a listener
// on one address beyond loopback is not reachable there.
func TestLoopbackAddr(t *testing.T) {
	for _, c := range []struct {
		ip   string
		want string
		ok   bool
	}{
		{"127.0.0.1", "127.0.0.1:8080", true},
		{"::1", "[::1]:8080", true},
		{"0.0.0.0", "127.0.0.1:8080", true},
		{"::", "[::1]:8080", true},
		{"192.0.2.7", "127.0.0.1:8080", false},
	} {
		got, ok := loopbackAddr(&net.TCPAddr{IP: net.ParseIP(c.ip), Port: 8080})
		if got != c.want || ok != c.ok {
			t.Errorf("loopbackAddr(%s) = %s, %v; want %s, %v", c.ip, got, ok, c.want, c.ok)
		}
	}
}
