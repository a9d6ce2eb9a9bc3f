//go:build linux

package batonmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/batonmcp"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// agentBin is the stand-in agent CLI TestMain builds from testdata/agent.
var agentBin string

// bridgeArg makes the test binary run the stdio bridge instead of the
// tests, as a host's bridge subcommand (Options.Bridge).
const bridgeArg = "baton-bridge"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == bridgeArg {
		o, err := mcpserver.BridgeFromEnv(os.Environ())
		if err == nil {
			err = mcpserver.Bridge(context.Background(), o)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bridge:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "baton-batonmcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "agent")
	cmd := osexec.Command("go", "build", "-o", agentBin, "./testdata/agent")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building testdata/agent: %v\n", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testCtx bounds a test's waits.
func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// rig is a host: a Coordinator on memstore over an exec engine whose
// profile the Wiring wires, and baton's MCP server mounted on a loopback
// HTTP server.
type rig struct {
	ctx  context.Context
	e    *exec.Engine
	co   *handoff.Coordinator
	srv  *mcpserver.Server
	w    *batonmcp.Wiring
	url  string
	ws   baton.WorkspaceID
	work string
	eng  string // the engine's name
	mcp  *mcpLog
}

// mcpLog records the JSON-RPC methods that reach the MCP endpoint, and the
// protocol version each initialize asked for.
type mcpLog struct {
	mu       sync.Mutex
	methods  []string
	versions []string
}

func (l *mcpLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
			l.mu.Lock()
			l.methods = append(l.methods, msg.Method)
			if msg.Method == "initialize" {
				l.versions = append(l.versions, msg.Params.ProtocolVersion)
			}
			l.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	})
}

func (l *mcpLog) seen() (methods, versions []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.methods), slices.Clone(l.versions)
}

type rigOpts struct {
	engine  string // the engine's name in the registry and the configurations
	model   string
	profile func(w *batonmcp.Wiring) exec.Profile
	env     []string
	limits  recap.Limits
	timeout time.Duration
	bridge  []string // Options.Bridge
}

func newRig(t testing.TB, o rigOpts) *rig {
	t.Helper()
	r := &rig{ctx: testCtx(t, o.timeout), ws: "ws-1", work: filepath.Join(t.TempDir(), "work"), eng: o.engine}
	if err := os.MkdirAll(r.work, 0o700); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	r.url = hs.URL + "/mcp"
	w, err := batonmcp.New(batonmcp.Options{Endpoint: r.url, Bridge: o.bridge})
	if err != nil {
		t.Fatal(err)
	}
	r.w = w
	e, err := exec.New(exec.Options{Profile: o.profile(w), DataDir: t.TempDir(), Env: o.env, StopGrace: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Errorf("engine Close: %v", err)
		}
	})
	r.e = e
	co, err := handoff.New(memstore.New(), engine.NewRegistry(map[string]engine.Engine{o.engine: e}),
		handoff.WithGenerationTimeout(o.timeout), handoff.WithReadyTimeout(o.timeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := co.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	r.co = co
	srv, err := mcpserver.New(mcpserver.Config{Coordinator: co, History: batonmcp.History(co, e), Limits: o.limits})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = srv
	r.mcp = &mcpLog{}
	mux.Handle("/mcp", r.mcp.wrap(srv.Handler()))
	w.Attach(co, srv)
	if _, err := co.Sessions().CreateWorkspace(r.ctx, store.Workspace{ID: r.ws, Root: r.work, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: o.engine, Model: o.model}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// source starts the workspace's first session with prompt and waits for
// its turn to end (its process to exit).
func (r *rig) source(t testing.TB, prompt string) store.Session {
	t.Helper()
	s, err := r.co.Sessions().Start(r.ctx, session.TurnRequest{Workspace: r.ws, Prompt: prompt})
	if err != nil {
		t.Fatalf("starting the source: %v", err)
	}
	r.idle(t)
	return s
}

// idle waits until no process of the workspace runs.
func (r *rig) idle(t testing.TB) {
	t.Helper()
	for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
		if _, running := r.co.Sessions().Running(r.ws); !running {
			return
		}
		select {
		case <-r.ctx.Done():
			t.Fatal("the workspace's process did not end")
		case <-time.After(d):
		}
	}
}

// transfer hands the current session to a fresh one with a report and
// waits for the transfer to settle.
func (r *rig) transfer(t testing.TB, src baton.SessionID, model string) handoff.Handoff {
	t.Helper()
	h, err := r.co.Create(r.ctx, handoff.Request{Workspace: r.ws, RequestID: "req-1", SourceSession: src,
		GenerateSummary: true, Target: baton.EngineConfig{Engine: r.eng, Model: model}})
	if err != nil {
		t.Fatal(err)
	}
	h, err = r.co.Wait(r.ctx, r.ws, h.ID)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return h
}

// transcript reads a session's whole transcript.
func (r *rig) transcript(t testing.TB, sid baton.SessionID) []recap.Event {
	t.Helper()
	h := batonmcp.TranscriptHistory{Path: r.e.TranscriptPath(sid)}
	n, err := h.Len(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := h.Events(r.ctx, 0, int(n))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
