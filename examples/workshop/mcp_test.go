package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
)

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

// TestMCPEndpoint: the server mounts the MCP endpoint at /mcp. A
// report-only turn's tools are listed to a report Access; a report with a
// token that is not the attempt's is refused as a tool error, and the
// transfer goes on; a request without the access headers is refused.
func TestMCPEndpoint(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-demo-report", "1m")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	hid := p.handoff(ws, "mcp-1", src, "demo-2", true)
	p.waitHandoff(ws, hid, "generating")

	acc := mcpserver.Access{Scope: mcpserver.ScopeReport, Workspace: baton.WorkspaceID(ws), Handoff: baton.HandoffID(hid), Token: baton.NewToken()}
	client := mcp.NewClient(&mcp.Implementation{Name: "workshop-test", Version: "v1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp", HTTPClient: headerClient(acc.Header()), DisableStandaloneSSE: true, MaxRetries: -1}
	ctx := context.Background()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "submit_session_handoff") {
		t.Fatalf("tools = %v, want submit_session_handoff", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "submit_session_handoff", Arguments: map[string]any{"report": "# My report"}})
	if err != nil {
		t.Fatalf("protocol error: %v", err)
	}
	if !res.IsError {
		t.Fatalf("a wrong token was accepted: %+v", res)
	}
	h := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs/"+hid, nil)
	if str(h.Body, "handoff", "state") != "generating" || h.Body["handoff"].(map[string]any)["hasReport"] != false {
		t.Errorf("handoff after the refused report = %s", h.Raw)
	}
	if r := p.do("POST", "/mcp", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}); r.Status != http.StatusBadRequest {
		t.Errorf("MCP request without access headers = %d %s", r.Status, r.Raw)
	}
}

// TestMCPBehindTheToken: with BATON_TOKEN set, /mcp is behind the same
// door as /api/: a request without the bearer token is refused with 401 in
// JSON (and tells nothing of workspaces or handoffs); with it, and with a
// turn's access headers, the tools are listed.
func TestMCPBehindTheToken(t *testing.T) {
	t.Parallel()
	const token = "one-door-token-0123456789"
	p := startBinaryEnv(t, "", append(os.Environ(), "BATON_TOKEN="+token))
	bearer := "Bearer " + token
	ws := str(p.do("POST", "/api/workspaces", map[string]any{"name": "door", "engine": "demo", "model": "demo-1"}, "Authorization", bearer).Body, "workspace", "id")
	if ws == "" {
		t.Fatal("no workspace created with the token")
	}
	list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
	for _, auth := range []string{"", "Bearer wrong"} {
		r := p.do("POST", "/mcp", list, "Accept", "application/json, text/event-stream", "Authorization", auth,
			"X-Baton-Scope", "target", "X-Baton-Workspace", ws, "X-Baton-Handoff", "h-missing", "X-Baton-Token", "t")
		if r.Status != http.StatusUnauthorized || r.code() != "unauthorized" {
			t.Errorf("/mcp with Authorization %q = %d %s; want 401 unauthorized in JSON", auth, r.Status, r.Raw)
		}
	}

	acc := mcpserver.Access{Scope: mcpserver.ScopeReport, Workspace: baton.WorkspaceID(ws), Handoff: "h-any", Token: baton.NewToken(), Bearer: baton.ParseToken(token)}
	client := mcp.NewClient(&mcp.Implementation{Name: "workshop-test", Version: "v1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp", HTTPClient: headerClient(acc.Header()), DisableStandaloneSSE: true, MaxRetries: -1}
	ctx := context.Background()
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect with the token: %v", err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list with the token: %v", err)
	}
}
