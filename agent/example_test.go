package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// The MCP side of a report-only turn: the report scope's tools, and a
// configuration that reaches the host's endpoint with the attempt's
// credentials in baton's own headers.
func ExampleWiring_For() {
	w, err := agent.NewWiring(agent.Config{Addr: "127.0.0.1:8417"})
	if err != nil {
		fmt.Println(err)
		return
	}
	req := engine.StartRequest{Workspace: "ws", Session: "s1", Turn: transcript.ReportOnly,
		Report: &engine.ReportCredentials{Workspace: "ws", Handoff: "h1", Attempt: 1, Token: baton.NewToken()}}
	l, ok, err := w.For(context.Background(), req)
	if err != nil || !ok {
		fmt.Println(ok, err)
		return
	}
	fmt.Println(l.Access.Scope, l.Tools)
	var cfg struct {
		Servers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(l.Config, &cfg); err != nil {
		fmt.Println(err)
		return
	}
	s := cfg.Servers["baton"]
	fmt.Println(s.Type, s.URL, s.Headers["X-Baton-Handoff"], s.Headers["X-Baton-Token"] == req.Report.Token.Reveal())

	// An ordinary turn outside any transfer gets no MCP server.
	_, ok, _ = w.For(context.Background(), engine.StartRequest{Workspace: "ws", Session: "s1"})
	fmt.Println(ok)
	// Output:
	// report [mcp__baton__submit_session_handoff mcp__baton__get_handoff_facts]
	// http http://127.0.0.1:8417/mcp h1 true
	// false
}
