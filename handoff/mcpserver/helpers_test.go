package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// envBridge makes the test binary run the stdio bridge instead of the
// tests: the stdio transport launches os.Args[0] with it, as an agent CLI
// launches a host's bridge subcommand.
const envBridge = "BATON_MCPSERVER_TEST_BRIDGE"

func TestMain(m *testing.M) {
	if os.Getenv(envBridge) == "1" {
		if err := mcpserver.Bridge(context.Background(), os.Environ(), nil, nil); err != nil {
			os.Stderr.WriteString("bridge: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fixture is a coordinator over a store and the scripted engine, an MCP
// server, and its HTTP endpoint on 127.0.0.1.
type fixture struct {
	ctx  context.Context
	st   store.Store
	eng  *enginetest.Engine
	co   *handoff.Coordinator
	srv  *mcpserver.Server
	url  string
	ws   baton.WorkspaceID
	root string
	src  store.Session
	n    int // handoffs created
}

type fixtureOpts struct {
	st      store.Store
	history func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error)
	limits  recap.Limits
	root    string
}

func newFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	f := &fixture{ctx: context.Background(), st: o.st, ws: "ws-1", root: o.root}
	if f.st == nil {
		f.st = memstore.New()
	}
	if f.root == "" {
		f.root = t.TempDir()
	}
	f.eng = enginetest.New(enginetest.Options{})
	t.Cleanup(f.eng.Close)
	reg := engine.Registry{"demo": f.eng}
	svc, err := session.New(f.st, reg, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	co, err := handoff.New(svc, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	f.co = co
	f.srv, err = mcpserver.New(mcpserver.Config{Coordinator: co, History: o.history, Limits: o.limits})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(f.srv.Handler())
	t.Cleanup(hs.Close)
	f.url = hs.URL
	f.src = f.workspace(t, f.ws)
	return f
}

// workspace creates a workspace with a running source session.
func (f *fixture) workspace(t testing.TB, ws baton.WorkspaceID) store.Session {
	t.Helper()
	svc := f.co.Sessions()
	if _, err := svc.CreateWorkspace(f.ctx, store.Workspace{ID: ws, Name: "demo", Mission: "ship it", Root: f.root,
		Config: baton.EngineConfig{Engine: "demo", Model: "demo-1"}}); err != nil {
		t.Fatal(err)
	}
	src, err := svc.Start(f.ctx, session.TurnRequest{Workspace: ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// reportTurn creates a handoff with a summary in ws (whose current session
// is src) and waits until its report-only turn runs; the turn hangs until
// the test finishes it. It returns the handoff, the turn's process and
// its Access.
func (f *fixture) reportTurn(t testing.TB, ws baton.WorkspaceID, src baton.SessionID) (store.Handoff, *enginetest.Process, mcpserver.Access) {
	t.Helper()
	f.n++
	before := len(f.eng.Launches())
	f.eng.Push(enginetest.Script{Hang: true})
	h, err := f.co.Create(f.ctx, handoff.Request{Workspace: ws, RequestID: fmt.Sprintf("r%d", f.n),
		SourceSession: src, GenerateSummary: true, Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}})
	if err != nil {
		t.Fatal(err)
	}
	l := f.launch(t, before+1)
	if l.Req.Turn != transcript.ReportOnly || l.Req.Report == nil {
		t.Fatalf("launch %d is not a report-only turn: %+v", before+1, l.Req)
	}
	f.waitState(t, ws, h.ID, store.StateGenerating)
	return h, l.Proc, mcpserver.ReportAccess(*l.Req.Report)
}

// launch waits for the n-th launch and returns it.
func (f *fixture) launch(t testing.TB, n int) enginetest.Launch {
	t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	ls, err := f.eng.WaitLaunches(ctx, n)
	if err != nil {
		t.Fatalf("waiting for launch %d: %v", n, err)
	}
	return ls[n-1]
}

// waitState polls, bounded, until the handoff reaches state.
func (f *fixture) waitState(t testing.TB, ws baton.WorkspaceID, id baton.HandoffID, state store.HandoffState) store.Handoff {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := f.co.Get(f.ctx, ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if h.State == state {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("handoff %s: state %s (error %q), want %s", id, h.State, h.Error, state)
		}
		time.Sleep(time.Millisecond)
	}
}

// transports are the ways a client reaches the server.
var transports = []string{"memory", "http", "stdio"}

// connect returns an MCP client session to the fixture's server with a,
// over the named transport, closed at the end of the test.
func (f *fixture) connect(t testing.TB, kind string, a mcpserver.Access) *mcp.ClientSession {
	t.Helper()
	cs, err := f.dial(kind, a)
	if err != nil {
		t.Fatalf("connect over %s: %v", kind, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func (f *fixture) dial(kind string, a mcpserver.Access) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "v1"}, nil)
	var tr mcp.Transport
	switch kind {
	case "memory":
		st, ct := mcp.NewInMemoryTransports()
		ss, err := f.srv.Connect(f.ctx, st, a)
		if err != nil {
			return nil, err
		}
		defer func() { go func() { _ = ss.Wait() }() }()
		tr = ct
	case "http":
		tr = &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: headerClient(a.Header()), DisableStandaloneSSE: true, MaxRetries: -1}
	case "stdio":
		tr = bridgeTransport(f.url, a)
	default:
		return nil, errors.New("unknown transport " + kind)
	}
	return client.Connect(f.ctx, tr, nil)
}

// bridgeTransport launches the test binary as the stdio bridge.
func bridgeTransport(url string, a mcpserver.Access) *mcp.CommandTransport {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), envBridge+"=1"), a.Environ(url)...)
	cmd.Stderr = os.Stderr
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
}

// headerClient sends h with every request, as an agent CLI does with the
// headers of its MCP configuration.
func headerClient(h http.Header) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		for k, v := range h {
			r.Header[k] = v
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// call calls a tool and fails the test on a protocol error.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	return res
}

// resultText joins a result's text contents.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content into dst.
func structured(t testing.TB, res *mcp.CallToolResult, dst any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// refusal checks res is a tool error with code and returns it.
func refusal(t testing.TB, res *mcp.CallToolResult, code string) mcpserver.Refusal {
	t.Helper()
	if !res.IsError {
		t.Fatalf("accepted, want a refusal with code %s: %s", code, resultText(res))
	}
	var r mcpserver.Refusal
	structured(t, res, &r)
	if r.Code != code || r.Action == "" || !strings.HasPrefix(resultText(res), "Refused (baton error "+code+"): ") {
		t.Fatalf("refusal %+v, text %q; want code %s and an action", r, resultText(res), code)
	}
	return r
}

func toolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}
