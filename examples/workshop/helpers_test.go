package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binPath is the workshop binary, built once per test run by TestMain.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "workshop-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "workshop")
	// The binary is built once; a race in it fails the run (see raceBuild).
	args := []string{"build", "-o", binPath}
	if raceBuild {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the workshop:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// proc is one run of the built binary.
type proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port
	addr string
	data string
	logs *syncBuffer
	done chan struct{}
	// patience bounds each wait for a state (waitIdle, waitHandoff); zero
	// means 20 s.
	patience time.Duration
	// token, when set, is sent as the bearer token of every request (the
	// server's BATON_TOKEN).
	token string
}

// deadline is when a wait for a state that starts now gives up.
func (p *proc) deadline() time.Time {
	if p.patience > 0 {
		return time.Now().Add(p.patience)
	}
	return time.Now().Add(20 * time.Second)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// startBinary runs the workshop on a free loopback port over data (a fresh
// directory when empty) and waits until /readyz answers 200. The process is
// stopped with SIGTERM at cleanup.
func startBinary(t testing.TB, data string, args ...string) *proc {
	t.Helper()
	return startBinaryEnv(t, data, append(os.Environ(), "BATON_TOKEN="), args...)
}

// startBinaryEnv is startBinary with env as the whole environment.
func startBinaryEnv(t testing.TB, data string, env []string, args ...string) *proc {
	t.Helper()
	if data == "" {
		data = t.TempDir()
	}
	p := &proc{t: t, addr: freeAddr(t), data: data, logs: &syncBuffer{}, done: make(chan struct{})}
	p.base = "http://" + p.addr
	all := append([]string{"-addr", p.addr, "-data", data, "-log-level", "warn"}, args...)
	p.cmd = exec.Command(binPath, all...)
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(syscall.SIGTERM) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(p.base + "/readyz")
		if err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("workshop exited before ready:\n%s", p.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("workshop not ready in time:\n%s", p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop signals the process and waits for it to exit.
func (p *proc) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.t.Errorf("workshop did not stop on %v:\n%s", sig, p.logs.String())
	}
	if strings.Contains(p.logs.String(), "WARNING: DATA RACE") {
		p.t.Errorf("the workshop binary raced:\n%s", p.logs.String())
	}
}

// client keeps connections to the workshop alive: many concurrent
// requests (the load benchmark) must not open a connection each.
var client = &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}

// resp is a decoded answer.
type resp struct {
	Status int
	Body   map[string]any
	Raw    []byte
	Header http.Header
}

// code is the error code of an error answer.
func (r resp) code() string { s, _ := r.Body["code"].(string); return s }

// do sends a request; body, when not nil, is sent as JSON (a string or
// []byte as is).
func (p *proc) do(method, path string, body any, hdr ...string) resp {
	p.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := client.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := resp{Status: res.StatusCode, Raw: raw, Header: res.Header}
	if len(raw) > 0 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out.Body); err != nil {
			p.t.Fatalf("%s %s: bad JSON %q: %v", method, path, raw, err)
		}
	}
	return out
}

// must sends a request and fails the test unless the status is want.
func (p *proc) must(want int, method, path string, body any) resp {
	p.t.Helper()
	r := p.do(method, path, body)
	if r.Status != want {
		p.t.Fatalf("%s %s = %d %s, want %d", method, path, r.Status, r.Raw, want)
	}
	return r
}

// workspace creates a workspace on model and returns its id.
func (p *proc) workspace(model string) string {
	p.t.Helper()
	r := p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "w-" + model, "engine": "demo", "model": model})
	return str(r.Body, "workspace", "id")
}

// session starts a session in ws and returns its id.
func (p *proc) session(ws string) string {
	p.t.Helper()
	r := p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": "build it"})
	return str(r.Body, "session", "id")
}

// handoffReq is a transfer request body.
func handoffReq(requestID, source, model string, summary bool) map[string]any {
	return map[string]any{"requestId": requestID, "sourceSessionId": source, "generateSummary": summary,
		"target": map[string]any{"engine": "demo", "model": model}}
}

// handoff creates a transfer and returns its id.
func (p *proc) handoff(ws, requestID, source, model string, summary bool) string {
	p.t.Helper()
	r := p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", handoffReq(requestID, source, model, summary))
	return str(r.Body, "handoff", "id")
}

// waitHandoff polls (bounded) until the handoff's state is one of states.
func (p *proc) waitHandoff(ws, id string, states ...string) map[string]any {
	p.t.Helper()
	deadline := p.deadline()
	for {
		r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs/"+id, nil)
		h := r.Body["handoff"].(map[string]any)
		for _, s := range states {
			if h["state"] == s {
				return h
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("handoff %s is %v, want one of %v", id, h["state"], states)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// str digs a string out of nested JSON objects.
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, k := range path {
		o, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = o[k]
	}
	s, _ := cur.(string)
	return s
}

// sseEvent is one event of the stream.
type sseEvent struct {
	ID    string
	Event string
	Data  string
}

// subscribe opens the workspace's event stream (after lastID when not
// empty) and returns its events until ctx ends.
func (p *proc) subscribe(ctx context.Context, ws, lastID string) <-chan sseEvent {
	p.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", p.base+"/api/workspaces/"+ws+"/events", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		p.t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan sseEvent, 1024)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Data != "" {
					select {
					case out <- ev:
					case <-ctx.Done():
						return
					}
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[6:]
			}
		}
	}()
	return out
}
