//go:build linux

package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/exec/clitest"
)

const (
	agentsReply  = "I fixed the tokenizer in parse.go; TestParse passes now."
	agentsReport = "## Handoff\nThe tokenizer in parse.go is fixed; TestParse passes. Next: the error messages."
	// agentsToken is the server's BATON_TOKEN: /api/ and /mcp both need
	// it, so the CLIs reach /mcp only because their MCP configurations
	// carry it.
	agentsToken = "real-agents-door-0123456789"
)

// agentsScript is the model behind the scripted APIs of TestRealAgents:
// it does its part of the transfer (clitest.Transfer).
var agentsScript = clitest.Transfer{Reply: agentsReply, Report: agentsReport}.Script

// TestRealAgents: with -engine claude (or codex) the workshop runs the
// real CLI, against a scripted API on 127.0.0.1 with the CLI isolated in a
// fresh home. A transfer with a report completes with the report the
// report-only turn submitted over the workshop's MCP endpoint, and the
// target's first turn pages through the source's conversation with
// read_source_history (its launch has the target scope), all behind
// BATON_TOKEN, which the CLIs' MCP configurations carry. The source's
// session shows the context usage its CLI reported. Skipped without
// the CLI; failed under CI=true.
func TestRealAgents(t *testing.T) {
	for _, tc := range []struct {
		engine, model string
		start         func(t *testing.T) (*clitest.API, *proc)
	}{
		{"claude", "claude-test-1", func(t *testing.T) (*clitest.API, *proc) {
			bin := clitest.ClaudeBin(t)
			api := clitest.NewMessages(t, agentsScript())
			return api, startBinaryEnv(t, "", append(api.ClaudeEnv(clitest.Home(t)), "BATON_TOKEN="+agentsToken), "-engine", "claude", "-claude-bin", bin)
		}},
		{"codex", "gpt-test-1", func(t *testing.T) (*clitest.API, *proc) {
			bin := clitest.CodexBin(t)
			api := clitest.NewResponses(t, agentsScript())
			home := clitest.Home(t)
			if err := clitest.WriteCodexConfig(home, api.URL); err != nil {
				t.Fatal(err)
			}
			return api, startBinaryEnv(t, "", append(clitest.CodexEnv(home), "BATON_TOKEN="+agentsToken), "-engine", "codex", "-codex-bin", bin)
		}},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			t.Parallel()
			api, p := tc.start(t)
			p.token = agentsToken        // /mcp is behind it too: the CLIs' MCP configurations carry it
			p.patience = 3 * time.Minute // three CLI launches, on a busy machine
			r := p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "real", "engine": tc.engine, "model": tc.model})
			ws := str(r.Body, "workspace", "id")
			r = p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": "Fix the parser."})
			src := str(r.Body, "session", "id")
			p.waitIdle(ws)
			// The source's turn made one request, of the scripted API's
			// default usage (10 input tokens): the CLI's context, with
			// the window it names, is on the session's JSON.
			r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
			if u, _ := r.Body["sessions"].([]any)[0].(map[string]any)["usage"].(map[string]any); u == nil || u["tokens"] != float64(10) || u["window"] == float64(0) {
				t.Errorf("the source's usage = %v; want 10 tokens in a window the CLI named", u)
			}
			body := handoffReq("real-1", src, "", true)
			body["target"] = map[string]any{"engine": tc.engine, "model": tc.model + "-next"}
			hid := str(p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", body).Body, "handoff", "id")
			h := p.waitHandoff(ws, hid, "completed", "failed")
			if h["state"] != "completed" || str(h, "report") != agentsReport {
				t.Fatalf("transfer with a report = %v\n%s", h, p.logs.String())
			}
			p.waitIdle(ws)
			pages := clitest.HistoryPages(api)
			if len(pages) != 1 || pages[0].IsError || !strings.Contains(pages[0].Text, "Fix the parser.") || !strings.Contains(pages[0].Text, agentsReply) ||
				strings.Contains(pages[0].Text, "Do not continue the work") {
				t.Errorf("the target's history pages = %+v; want one with the source's conversation, not its report-only turn\n%s", pages, p.logs.String())
			}
			other := map[string]string{"claude": "codex", "codex": "claude"}[tc.engine]
			if r := p.do("POST", "/api/workspaces", map[string]any{"name": "x", "engine": other, "model": "m"}); r.Status != http.StatusBadRequest {
				t.Errorf("an engine not asked for = %d %s", r.Status, r.Raw)
			}
		})
	}
}
