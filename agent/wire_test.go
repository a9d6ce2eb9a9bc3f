//go:build linux

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

func TestNewOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    agent.Config
		err  error
	}{
		{"http", agent.Config{Addr: "127.0.0.1:1"}, nil},
		{"bridge", agent.Config{Addr: "127.0.0.1:1", Name: "relay", Bridge: []string{"/usr/bin/host", "mcp-bridge"}}, nil},
		{"no addr", agent.Config{}, agent.ErrBadConfig},
		{"no port", agent.Config{Addr: "127.0.0.1"}, agent.ErrBadConfig},
		{"bad name", agent.Config{Addr: "127.0.0.1:1", Name: "ba ton"}, agent.ErrBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agent.NewWiring(tc.o)
			if (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Errorf("New = %v; want %v", err, tc.err)
			}
		})
	}
}

// transferred runs a transfer with the stand-in agent and returns the rig
// and the completed handoff.
func transferred(t testing.TB) (*rig, store.Handoff) {
	t.Helper()
	r := newRig(t, rigOpts{engine: "agent", model: "small", profile: agentProfile("the report"), timeout: 30 * time.Second})
	src := r.source(t, "Fix the parser.")
	h := r.transfer(t, src.ID, "large")
	if h.State != store.StateCompleted {
		t.Fatalf("the transfer settled %s (%s)", h.State, h.Error)
	}
	r.idle(t)
	return r, h
}

// callTool calls a tool of the server at url with a's headers.
func callTool(t *testing.T, ctx context.Context, url string, a mcpserver.Access, tool string) *mcp.CallToolResult {
	t.Helper()
	hc := &http.Client{Transport: headerRT{a.Header(), http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type headerRT struct {
	h    http.Header
	base http.RoundTripper
}

func (rt headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.h {
		r.Header[k] = v
	}
	return rt.base.RoundTrip(r)
}

// TestFor: which launches get an MCP side, of which scope; a target grant
// is reused across the target's launches until Revoke, after which the
// old token is refused.
func TestFor(t *testing.T) {
	r, h := transferred(t)
	cred := &engine.ReportCredentials{Workspace: r.ws, Handoff: h.ID, Attempt: 1, Token: baton.NewToken()}
	for _, tc := range []struct {
		name  string
		req   engine.StartRequest
		ok    bool
		scope mcpserver.Scope
	}{
		{"report-only turn", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession, Turn: transcript.ReportOnly, Report: cred}, true, mcpserver.ScopeReport},
		{"report-only turn without credentials", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession, Turn: transcript.ReportOnly}, false, ""},
		{"the source's ordinary turn", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession}, false, ""},
		{"another session's turn", engine.StartRequest{Workspace: r.ws, Session: "s-other"}, false, ""},
		{"the target's turn", engine.StartRequest{Workspace: r.ws, Session: h.TargetSession}, true, mcpserver.ScopeTarget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok, err := r.w.For(r.ctx, tc.req)
			if err != nil || ok != tc.ok {
				t.Fatalf("For = %v, %v; want ok=%v", ok, err, tc.ok)
			}
			if !ok {
				return
			}
			if l.Access.Scope != tc.scope || l.Access.Handoff != h.ID || l.Access.Workspace != r.ws {
				t.Errorf("Access = %+v; want scope %s of %s", l.Access, tc.scope, h.ID)
			}
			var wantTools []string
			for _, tool := range mcpserver.Tools(tc.scope) {
				wantTools = append(wantTools, "mcp__baton__"+tool)
			}
			if diff := cmp.Diff(wantTools, l.Tools); diff != "" {
				t.Errorf("Tools (-want +got):\n%s", diff)
			}
			want, err := r.w.ClaudeConfig(l.Access)
			if err != nil {
				t.Fatal(err)
			}
			if string(l.Config) != string(want) {
				t.Errorf("Config = %s; want %s", l.Config, want)
			}
		})
	}

	target := engine.StartRequest{Workspace: r.ws, Session: h.TargetSession}
	first, _, _ := r.w.For(r.ctx, target)
	again, _, _ := r.w.For(r.ctx, target)
	if first.Access.Token.Reveal() != again.Access.Token.Reveal() {
		t.Error("a second launch of the target got another grant")
	}
	if res := callTool(t, r.ctx, r.url, first.Access, mcpserver.ToolHistory); res.IsError {
		t.Fatalf("the grant's history call was refused: %+v", res.Content)
	}
	r.w.Revoke(h.ID)
	next, _, _ := r.w.For(r.ctx, target)
	if next.Access.Token.Reveal() == first.Access.Token.Reveal() {
		t.Error("after Revoke, the target kept its token")
	}
	if res := callTool(t, r.ctx, r.url, first.Access, mcpserver.ToolHistory); !res.IsError {
		t.Error("a revoked grant still reads the history")
	}
	if res := callTool(t, r.ctx, r.url, next.Access, mcpserver.ToolHistory); res.IsError {
		t.Errorf("the new grant's history call was refused: %+v", res.Content)
	}
}

// TestForBeforeAttach: without the Coordinator and the server, a target
// cannot be known; a report-only turn is still wired.
func TestForBeforeAttach(t *testing.T) {
	w, err := agent.NewWiring(agent.Config{Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	if _, ok, err := w.For(ctx, engine.StartRequest{Workspace: "ws", Session: "s1"}); ok || err != nil {
		t.Errorf("For an ordinary turn = %v, %v; want none", ok, err)
	}
	cred := &engine.ReportCredentials{Workspace: "ws", Handoff: "h1", Attempt: 2, Token: baton.NewToken()}
	if l, ok, err := w.For(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Turn: transcript.ReportOnly, Report: cred}); !ok || err != nil || l.Access != mcpserver.ReportAccess(*cred) {
		t.Errorf("For a report-only turn = %+v, %v, %v; want its credentials", l.Access, ok, err)
	}
}

// TestClaudeFlags: the flags and the file Wiring.Claude gives each kind of
// launch, over HTTP and through the stdio bridge.
func TestClaudeFlags(t *testing.T) {
	r, h := transferred(t)
	bridged, err := agent.NewWiring(agent.Config{Addr: strings.TrimSuffix(strings.TrimPrefix(r.url, "http://"), agent.MCPPath), Bridge: []string{"/usr/local/bin/host", "mcp-bridge"}})
	if err != nil {
		t.Fatal(err)
	}
	bridged.Attach(r.co, r.srv)
	cred := &engine.ReportCredentials{Workspace: r.ws, Handoff: h.ID, Attempt: 1, Token: baton.NewToken()}
	report := engine.StartRequest{Workspace: r.ws, Session: h.SourceSession, Turn: transcript.ReportOnly, Report: cred}
	tgt := engine.StartRequest{Workspace: r.ws, Session: h.TargetSession}
	for _, w := range []*agent.Wiring{r.w, bridged} {
		p := w.Claude(exec.ClaudeOptions{Command: "claude"})
		if diff := cmp.Diff([]string{"--tools", "Read,Grep,Glob", "--allowedTools",
			"Read,Grep,Glob,mcp__baton__submit_session_handoff,mcp__baton__get_handoff_facts"}, p.ReportOnly); diff != "" {
			t.Errorf("ReportOnly flags (-want +got):\n%s", diff)
		}
		for _, tc := range []struct {
			name  string
			req   engine.StartRequest
			flags []string
		}{
			{"report-only", report, []string{"--mcp-config", "{file:mcp.json}", "--strict-mcp-config"}},
			{"target", tgt, []string{"--mcp-config", "{file:mcp.json}", "--allowedTools", "mcp__baton__read_source_history,mcp__baton__get_handoff_facts"}},
			{"ordinary", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession}, nil},
		} {
			x, err := p.LaunchExtra(r.ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.flags, x.Flags); diff != "" {
				t.Errorf("%s flags (-want +got):\n%s", tc.name, diff)
			}
			l, ok, err := w.For(r.ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(x.Files["mcp.json"]); ok != (got != "") || got != string(l.Config) {
				t.Errorf("%s file = %q; want %q", tc.name, got, l.Config)
			}
		}
	}
	l, _, _ := bridged.For(r.ctx, tgt)
	var cfg struct {
		Servers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(l.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range l.Access.Environ(r.url) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	s := cfg.Servers["baton"]
	if s.Type != "stdio" || s.Command != "/usr/local/bin/host" || !cmp.Equal(s.Args, []string{"mcp-bridge"}) || !cmp.Equal(s.Env, env) {
		t.Errorf("bridged Config = %s; want the bridge with the turn's Access in its environment", l.Config)
	}
}

// TestHistory: the server's history is the source's transcript in the
// engine; a handoff with no source session has none.
func TestHistory(t *testing.T) {
	r, h := transferred(t)
	hist, err := agent.History(r.co, engine.Registry{r.eng: r.e})(r.ctx, r.ws, h.ID)
	if err != nil {
		t.Fatal(err)
	}
	n, err := hist.Len(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := hist.Events(r.ctx, 0, int(n))
	if err != nil {
		t.Fatal(err)
	}
	want := r.transcript(t, h.SourceSession)
	if n == 0 || len(want) != int(n) {
		t.Fatalf("Len = %d; the transcript has %d events", n, len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Events (-transcript +history):\n%s", diff)
	}
	if tail, err := hist.Events(r.ctx, n-1, 10); err != nil || len(tail) != 1 || tail[0] != want[n-1] {
		t.Errorf("Events(%d, 10) = %v, %v; want the last event", n-1, tail, err)
	}

	if _, err := agent.History(r.co, engine.Registry{r.eng: r.e})(r.ctx, r.ws, "h-unknown"); !errors.Is(err, handoff.ErrNotFound) {
		t.Errorf("History of an unknown handoff: %v; want ErrNotFound", err)
	}
	if _, err := agent.History(r.co, engine.Registry{"elsewhere": r.e})(r.ctx, r.ws, h.ID); !errors.Is(err, mcpserver.ErrNoHistory) {
		t.Errorf("History of a source whose engine keeps no transcript here: %v; want ErrNoHistory", err)
	}
	if _, err := (agent.TranscriptHistory{Path: r.e.TranscriptPath("s-none")}).Len(r.ctx); !errors.Is(err, baton.ErrNotFound) {
		t.Errorf("Len of a missing transcript: %v; want ENOTFOUND", err)
	}
}

// TestHistoryNoSource: a transfer out of a workspace that never had a
// session has no source conversation.
func TestHistoryNoSource(t *testing.T) {
	r := newRig(t, rigOpts{engine: "agent", model: "small", profile: agentProfile("the report"), timeout: 30 * time.Second})
	h, err := r.co.Create(r.ctx, handoff.Request{Workspace: r.ws, RequestID: "req-1", Target: baton.EngineConfig{Engine: "agent", Model: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	if h, err = r.co.Wait(r.ctx, r.ws, h.ID); err != nil || h.State != store.StateCompleted {
		t.Fatalf("Wait = %s, %v", h.State, err)
	}
	r.idle(t)
	if _, err := agent.History(r.co, engine.Registry{r.eng: r.e})(r.ctx, r.ws, h.ID); !errors.Is(err, mcpserver.ErrNoHistory) {
		t.Errorf("History without a source: %v; want ErrNoHistory", err)
	}
	// The target's agent asked anyway, and was refused with a sentence.
	turns := agentTurns(t, r.transcript(t, h.TargetSession))
	var refused bool
	for _, l := range mcpLines(turns[0]) {
		refused = refused || l.Name == mcpserver.ToolHistory && l.IsError
	}
	if !refused {
		t.Errorf("the target's history call was not refused: %+v", mcpLines(turns[0]))
	}
}

// TestCodexFlags: Wiring.Codex passes the server as configuration
// overrides and the token in the environment, never in the arguments.
func TestCodexFlags(t *testing.T) {
	r, h := transferred(t)
	p := r.w.Codex(exec.CodexOptions{Command: "codex"})
	for _, tc := range []struct {
		name  string
		req   engine.StartRequest
		scope mcpserver.Scope
	}{
		{"report-only", engine.StartRequest{Workspace: r.ws, Session: h.SourceSession, Turn: transcript.ReportOnly,
			Report: &engine.ReportCredentials{Workspace: r.ws, Handoff: h.ID, Attempt: 1, Token: baton.NewToken()}}, mcpserver.ScopeReport},
		{"target", engine.StartRequest{Workspace: r.ws, Session: h.TargetSession}, mcpserver.ScopeTarget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := p.LaunchExtra(r.ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			l, _, _ := r.w.For(r.ctx, tc.req)
			tools := mcpserver.Tools(tc.scope)
			want := []string{
				"-c", `mcp_servers.baton.url="` + r.url + `"`,
				"-c", `mcp_servers.baton.http_headers={"X-Baton-Handoff"="` + string(h.ID) + `","X-Baton-Scope"="` + string(tc.scope) + `","X-Baton-Workspace"="` + string(r.ws) + `"}`,
				"-c", `mcp_servers.baton.env_http_headers={"X-Baton-Token"="BATON_MCP_TOKEN"}`,
				"-c", `mcp_servers.baton.enabled_tools=["` + tools[0] + `","` + tools[1] + `"]`,
				"-c", `mcp_servers.baton.tools.` + tools[0] + `.approval_mode="approve"`,
				"-c", `mcp_servers.baton.tools.` + tools[1] + `.approval_mode="approve"`,
			}
			if diff := cmp.Diff(want, x.Flags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{agent.EnvToken + "=" + l.Access.Token.Reveal()}, x.Env); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			if len(x.Files) != 0 {
				t.Errorf("files %v; want none", x.Files)
			}
		})
	}
}
