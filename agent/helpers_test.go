//go:build linux

package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// bins holds the test programs TestMain builds: "agent", the stand-in
// agent CLI.
var bins = map[string]string{}

// bridgeArg makes the test binary run the stdio bridge instead of the
// tests, as a host's bridge subcommand (Options.Bridge).
const bridgeArg = "baton-bridge"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == bridgeArg {
		if err := mcpserver.Bridge(context.Background(), os.Environ(), nil, nil); err != nil {
			fmt.Fprintln(os.Stderr, "bridge:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	skipExamplesWithoutClaude()
	clitest.Main(m, bins, "agent")
}

// skipExamplesWithoutClaude skips ExampleNew, which runs the real Claude
// Code CLI, when the CLI is not found, as clitest.ClaudeBin skips a test:
// an example cannot skip itself. Under CI=true it runs, and fails.
func skipExamplesWithoutClaude() {
	if _, err := clitest.LookBin(clitest.EnvClaudeBin, "claude"); err == nil || os.Getenv("CI") == "true" {
		return
	}
	flag.Parse()
	skip := flag.Lookup("test.skip")
	pat := "^ExampleNew$"
	if old := skip.Value.String(); old != "" {
		pat = old + "|" + pat
	}
	if err := skip.Value.Set(pat); err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "skipping ExampleNew: the claude CLI is not installed: set %s or put claude on PATH (npm install %s)\n", clitest.EnvClaudeBin, clitest.ClaudePackage)
}

// testCtx bounds a test's waits.
func testCtx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	return clitest.Ctx(t, d)
}

// rig is a program that runs one agent CLI: a Host on memstore (New)
// whose MCP server is served on a loopback HTTP server, through a
// recorder of the MCP exchange.
type rig struct {
	ctx  context.Context
	h    *agent.Host
	e    *exec.Engine
	co   *handoff.Coordinator
	srv  *mcpserver.Server
	w    *agent.Wiring
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
	engine string // the engine's name in the registry and the configurations
	model  string
	// One of:
	claude  *exec.ClaudeOptions // engine agent.Claude
	codex   *exec.CodexOptions  // engine agent.Codex
	profile func(w *agent.Wiring) exec.Profile
	env     []string
	limits  recap.Limits
	timeout time.Duration
	bridge  []string // Options.Bridge
	coOpts  []handoff.Option
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
	cfg := agent.Config{Addr: hs.Listener.Addr().String(), DataDir: t.TempDir(), Claude: o.claude, Codex: o.codex, Bridge: o.bridge,
		Exec:    exec.Options{Env: o.env, StopGrace: 2 * time.Second},
		Handoff: append([]handoff.Option{handoff.WithTimeouts(handoff.Timeouts{Generation: o.timeout, Ready: o.timeout})}, o.coOpts...),
		MCP:     mcpserver.Config{Limits: o.limits}}
	if o.profile != nil {
		cfg.Profiles = map[string]func(*agent.Wiring) exec.Profile{o.engine: o.profile}
	}
	h, err := agent.New(memstore.New(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	clitest.Cleanup(t, "Close", h.Close)
	r.h, r.e, r.co, r.srv, r.w, r.url = h, h.CLI(o.engine), h.Coordinator, h.MCP, h.Wiring, h.Endpoint()
	if r.e == nil {
		t.Fatalf("no CLI engine %q", o.engine)
	}
	r.mcp = &mcpLog{}
	mux.Handle(agent.MCPPath, r.mcp.wrap(h.Handler()))
	co := r.co
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
func (r *rig) transfer(t testing.TB, src baton.SessionID, model string) store.Handoff {
	t.Helper()
	return r.transferWith(t, src, model, true)
}

// transferWith is transfer with or without a report.
func (r *rig) transferWith(t testing.TB, src baton.SessionID, model string, report bool) store.Handoff {
	t.Helper()
	h, err := r.co.Create(r.ctx, handoff.Request{Workspace: r.ws, RequestID: "req-1", SourceSession: src,
		GenerateSummary: report, Target: baton.EngineConfig{Engine: r.eng, Model: model}})
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
func (r *rig) transcript(t testing.TB, sid baton.SessionID) []transcript.Event {
	t.Helper()
	h := agent.TranscriptHistory{Path: r.e.TranscriptPath(sid)}
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
