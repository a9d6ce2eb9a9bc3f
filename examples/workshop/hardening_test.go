package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileFields: every field is bounded and invalid UTF-8 is refused
// (never stored with U+FFFD), and no engine value can read as a flag.
func TestHostileFields(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	ws := func(fields string) resp {
		return p.do("POST", "/api/workspaces", []byte(`{"engine":"demo","model":"demo-1",`+fields+`}`))
	}
	cases := []struct {
		name, fields, says string
	}{
		{"huge name", `"name":"` + strings.Repeat("n", 900_000) + `"`, "name is over its limit: at most 200 characters"},
		{"huge mission", `"name":"n","mission":"` + strings.Repeat("m", 1_000_000) + `"`, "mission is over its limit: at most 20000 characters"},
		{"body over a MiB", `"name":"n","mission":"` + strings.Repeat("m", 1<<20) + `"`, "too-large"},
		{"long mission", `"name":"n","mission":"` + strings.Repeat("m", 20_001) + `"`, "mission is over its limit"},
		{"raw invalid UTF-8", `"name":"bad ` + "\xff\xfe" + `"`, "not valid UTF-8"},
		{"escaped lone surrogate", `"name":"bad \udcff"`, "lone UTF-16 surrogate"},
		{"name with a newline", `"name":"a\nb"`, "one line"},
		{"model as a flag", `"name":"n","model":"--dangerously-skip-permissions"`, "must not start with '-'"},
	}
	for _, c := range cases {
		r := ws(c.fields)
		if r.Status != http.StatusBadRequest && !(c.says == "too-large" && r.Status == http.StatusRequestEntityTooLarge) {
			t.Errorf("%s: %d %.200s, want 400", c.name, r.Status, r.Raw)
			continue
		}
		if msg, _ := r.Body["error"].(string); !strings.Contains(msg, c.says) && r.code() != c.says {
			t.Errorf("%s: %q, want it to say %q", c.name, msg, c.says)
		}
	}
	// A pair of escaped surrogates is one valid character.
	r := p.must(http.StatusCreated, "POST", "/api/workspaces", []byte(`{"name":"ok \ud83d\ude00","engine":"demo","model":"demo-1"}`))
	if got := str(r.Body, "workspace", "name"); got != "ok 😀" {
		t.Errorf("name = %q", got)
	}
	id := str(r.Body, "workspace", "id")
	for _, msg := range []string{`{"text":"` + "\xff" + `"}`, `{"text":"\ud800"}`} {
		if r := p.do("POST", "/api/workspaces/"+id+"/messages", []byte(msg)); r.Status != http.StatusBadRequest {
			t.Errorf("message %q: %d %s", msg, r.Status, r.Raw)
		}
	}
	r = p.must(http.StatusOK, "GET", "/api/workspaces", nil)
	if len(r.Raw) > 10_000 {
		t.Errorf("GET /api/workspaces answers %d bytes", len(r.Raw))
	}
}

// TestErrorsAreJSON: every error of every route is {error, code} JSON
// with the right status, and a 5xx never shows the host's paths.
func TestErrorsAreJSON(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startBinary(t, data)
	isJSONErr := func(what string, r resp, status int, code string) {
		t.Helper()
		if r.Status != status || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || r.code() != code {
			t.Errorf("%s: %d %s %s, want %d JSON code %s", what, r.Status, r.Header.Get("Content-Type"), r.Raw, status, code)
		}
		if _, ok := r.Body["error"].(string); !ok {
			t.Errorf("%s: no error message: %s", what, r.Raw)
		}
	}
	for _, m := range []string{"OPTIONS", "PUT", "DELETE", "PATCH"} {
		r := p.do(m, "/api/workspaces", nil)
		isJSONErr(m+" /api/workspaces", r, http.StatusMethodNotAllowed, "method-not-allowed")
		if r.Header.Get("Allow") == "" {
			t.Errorf("%s: no Allow header", m)
		}
	}
	isJSONErr("unknown API path", p.do("GET", "/api/nope", nil), http.StatusNotFound, "not-found")
	isJSONErr("POST to a workspace's pressure policy", p.do("POST", "/api/workspaces/ws-1/pressure", map[string]any{"threshold": 0.8}), http.StatusMethodNotAllowed, "method-not-allowed")
	isJSONErr("a pressure policy of no workspace", p.do("PUT", "/api/workspaces/ws-1/pressure", map[string]any{"threshold": 0.8}), http.StatusNotFound, "not-found")
	isJSONErr("a pressure threshold over 1", p.do("PUT", "/api/workspaces/ws-1/pressure", map[string]any{"threshold": 1.5}), http.StatusBadRequest, "invalid-request")
	// Every GET path is the page's: another method is not allowed there.
	isJSONErr("POST to a page path", p.do("POST", "/nope", map[string]any{}), http.StatusMethodNotAllowed, "method-not-allowed")
	isJSONErr("unknown page file", p.do("GET", "/nope.js", nil), http.StatusNotFound, "not-found")
	isJSONErr("/mcp without its headers", p.do("POST", "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}), http.StatusBadRequest, "invalid-request")
	isJSONErr("GET /mcp", p.do("GET", "/mcp", nil), http.StatusNotFound, "not-found")
	isJSONErr("/mcp with invalid UTF-8", p.do("POST", "/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_session_handoff","arguments":{"report":"`+"\xff"+`"}}}`),
		"X-Baton-Scope", "report", "X-Baton-Workspace", "ws-1", "X-Baton-Handoff", "hof-1", "X-Baton-Token", "tok"), http.StatusBadRequest, "invalid-request")
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"` + strings.Repeat("x", 5<<20) + `"}}`
	isJSONErr("/mcp over its body limit", p.do("POST", "/mcp", []byte(big), "X-Baton-Scope", "target", "X-Baton-Workspace", "ws-1",
		"X-Baton-Handoff", "hof-1", "X-Baton-Token", "tok", "Accept", "application/json, text/event-stream"), http.StatusRequestEntityTooLarge, "too-large")

	// An internal error: the workspaces directory cannot be made.
	if err := os.WriteFile(filepath.Join(data, "workspaces"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := p.do("POST", "/api/workspaces", map[string]any{"name": "w", "engine": "demo", "model": "demo-1"})
	isJSONErr("internal error", r, http.StatusInternalServerError, "internal")
	msg, _ := r.Body["error"].(string)
	if strings.Contains(msg, data) || strings.Contains(msg, "/") || !strings.Contains(msg, r.Header.Get("X-Request-Id")) {
		t.Errorf("internal error message %q: names a path, or not the request id %q", msg, r.Header.Get("X-Request-Id"))
	}
	// The log is copied from the process's stderr: it may arrive after
	// the answer.
	eventually(t, "the log holds the details", func() bool { return strings.Contains(p.logs.String(), data) })
}

// TestRemovedDataDirectory: after rm -rf of the data directory of a
// running server, nothing more is acknowledged and /readyz says why.
func TestRemovedDataDirectory(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	p := startBinary(t, data)
	p.workspace("demo-1")
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	r := p.do("POST", "/api/workspaces", map[string]any{"name": "after", "engine": "demo", "model": "demo-1"})
	if r.Status != http.StatusServiceUnavailable || r.code() != "unavailable" {
		t.Fatalf("create after the removal: %d %s, want 503", r.Status, r.Raw)
	}
	r = p.do("GET", "/readyz", nil)
	reason, _ := r.Body["reason"].(string)
	if r.Status != http.StatusServiceUnavailable || !strings.Contains(reason, "directory is gone") || strings.Contains(reason, data) {
		t.Fatalf("/readyz after the removal: %d %s", r.Status, r.Raw)
	}
}

// TestReadOnlyDataDirectory: a read-only store directory is reported by
// /readyz, refuses writes, and what was acknowledged survives a restart.
// As root (whom modes do not stop) it needs a read-only bind mount in a
// mount namespace, which the store tests cover; here it skips.
func TestReadOnlyDataDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory modes: store/badgerstore's TestReadOnlyDirectory covers it as user nobody")
	}
	t.Parallel()
	data := t.TempDir()
	p := startBinary(t, data)
	ws := p.workspace("demo-1")
	dir := filepath.Join(data, "store")
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if r := p.do("GET", "/readyz", nil); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("/readyz: %d %s", r.Status, r.Raw)
	}
	if r := p.do("POST", "/api/workspaces", map[string]any{"name": "after", "engine": "demo", "model": "demo-1"}); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("create: %d %s", r.Status, r.Raw)
	}
	p.stop(syscall.SIGTERM)
	_ = os.Chmod(dir, 0o700)
	q := startBinary(t, data)
	q.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil)
}

// rawConn opens a TCP connection to the server with a tiny receive
// buffer (so that a reader that stops reading stalls the server soon).
func rawConn(t testing.TB, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSlowBody: a body trickled a byte at a time is cut off by the body
// timeout (408), instead of holding the connection.
func TestSlowBody(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-body-timeout", "1s")
	c := rawConn(t, p.addr)
	fmt.Fprintf(c, "POST /api/workspaces HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n", p.addr)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "request-timeout") {
		t.Fatalf("trickled body: %d %s", res.StatusCode, b)
	}
}

// openStream opens an event stream and returns its status and body.
func openStream(ctx context.Context, p *proc, ws string, hdr ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/api/workspaces/"+ws+"/events", nil)
	if err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return http.DefaultClient.Do(req)
}

// TestStreamCap: past -max-streams a stream is refused with 503
// too-many-streams; once one closes, a new one is served.
func TestStreamCap(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-max-streams", "2")
	ws := p.workspace("demo-1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var open []*http.Response
	for range 2 {
		res, err := openStream(ctx, p, ws)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("stream: %v %v", res, err)
		}
		open = append(open, res)
	}
	res, err := openStream(ctx, p, ws)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || body["code"] != "too-many-streams" || res.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream: %d %v", res.StatusCode, body)
	}
	open[0].Body.Close()
	eventually(t, "a stream after one closed", func() bool {
		res, err := openStream(ctx, p, ws)
		if err != nil {
			return false
		}
		defer res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// eventually polls cond (bounded: a generous deadline, not a timing
// claim) until it holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStalledReaderDropped: a reader that stops reading is dropped once a
// write to it blocks past -stream-write-timeout, which frees its slot
// (one stream at most here).
func TestStalledReaderDropped(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-max-streams", "1", "-stream-write-timeout", "500ms", "-demo-turn", "10ms")
	ws := p.workspace("demo-1")
	c := rawConn(t, p.addr)
	fmt.Fprintf(c, "GET /api/workspaces/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", ws, p.addr)
	// Read its status line, so that the stalled stream has its slot
	// before anything else asks (else the check's own stream may take it
	// first and the stalled one be refused); then read no more.
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	status := make([]byte, len("HTTP/1.1 200"))
	if _, err := io.ReadFull(c, status); err != nil || string(status) != "HTTP/1.1 200" {
		t.Fatalf("the stalled stream's status line = %q, %v; want HTTP/1.1 200", status, err)
	}
	// The stalled stream holds the one slot.
	eventually(t, "the stalled stream holds the slot", func() bool {
		res, err := openStream(context.Background(), p, ws)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusServiceUnavailable
	})
	// Events of 150 KB each fill its buffers.
	text := strings.Repeat("x", 150_000)
	for range 60 {
		p.do("POST", "/api/workspaces/"+ws+"/messages", map[string]any{"text": text})
	}
	eventually(t, "a stream once the stalled one was dropped", func() bool {
		res, err := openStream(context.Background(), p, ws)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
}

// TestResumePastTheEnd: a Last-Event-ID past the end of the feed is
// answered with an "event: reset" carrying the feed's last sequence, then
// the stream goes on from there.
func TestResumePastTheEnd(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	ws := p.workspace("demo-1")
	for _, after := range []string{"1000000", strconv.FormatInt(math.MaxInt64, 10)} {
		ctx, cancel := context.WithCancel(context.Background())
		events := p.subscribe(ctx, ws, after)
		select {
		case ev := <-events:
			var d struct{ LastSeq, After int64 }
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil || ev.Event != "reset" || ev.ID != strconv.FormatInt(d.LastSeq, 10) || strconv.FormatInt(d.After, 10) != after {
				t.Fatalf("after %s: first event %+v (%v)", after, ev, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("after %s: no reset event", after)
		}
		// The stream goes on from the last sequence: a new change arrives.
		p.session(ws)
		select {
		case ev := <-events:
			if ev.Event == "reset" {
				t.Fatalf("a second reset: %+v", ev)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no event after the reset")
		}
		cancel()
		p.do("POST", "/api/workspaces/"+ws+"/stop", nil)
	}
}
