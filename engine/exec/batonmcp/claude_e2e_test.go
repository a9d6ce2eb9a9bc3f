//go:build linux

package batonmcp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/batonmcp"
	"github.com/batonhq/baton/engine/exec/internal/clitest"
)

// messagesAPI stands in for the Messages API on 127.0.0.1. Its model
// calls the first baton tool the request offers that the script names,
// once per conversation turn, and otherwise answers with text:
//
//   - a request offering mcp__baton__submit_session_handoff: call
//     get_handoff_facts and it (with the report);
//   - a request offering mcp__baton__read_source_history: call it and
//     get_handoff_facts;
//   - a request whose last message is a tool result: "Done." (recorded);
//   - anything else: the source's reply, sourceReply.
type messagesAPI struct {
	srv    *httptest.Server
	report string
	toolLog
}

// toolResult is a tool_result block the CLI sent to the API.
type toolResult struct {
	Tool    string // the name of the tool called
	IsError bool
	Text    string
}

const sourceReply = "I fixed the tokenizer in parse.go; TestParse passes now."

func newMessagesAPI(t *testing.T, report string) *messagesAPI {
	a := &messagesAPI{report: report, toolLog: newToolLog()}
	a.srv = clitest.API(t, "/v1/messages", http.StatusOK, a.serve)
	return a
}

func (a *messagesAPI) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if !clitest.DecodeJSON(w, r, &req) {
		return
	}
	if len(req.Messages) == 0 {
		http.Error(w, "no messages", http.StatusBadRequest)
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_0","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`, req.Model)
		return
	}
	var offered []string
	for _, tl := range req.Tools {
		if strings.HasPrefix(tl.Name, "mcp__baton__") {
			offered = append(offered, tl.Name)
		}
	}
	slices.Sort(offered)
	// The tool uses of the conversation, by id, and the last message's
	// tool results.
	uses := map[string]string{}
	var last []struct {
		Type      string          `json:"type"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		ToolUseID string          `json:"tool_use_id"`
		IsError   bool            `json:"is_error"`
		Content   json.RawMessage `json:"content"`
	}
	for _, m := range req.Messages {
		last = nil
		json.Unmarshal(m.Content, &last) // a plain string leaves it empty
		for _, b := range last {
			if b.Type == "tool_use" {
				uses[b.ID] = b.Name
			}
		}
	}
	var results []toolResult
	for _, b := range last {
		if b.Type == "tool_result" {
			results = append(results, toolResult{Tool: uses[b.ToolUseID], IsError: b.IsError, Text: contentText(b.Content)})
		}
	}
	a.record(offered, results)

	event := clitest.SSE(w)
	clitest.MessageStart(event, req.Model)
	// toolUses answers with calls of the tools named, in one message.
	toolUses := func(calls ...string) {
		for i, name := range calls {
			clitest.ToolUse(event, i, fmt.Sprintf("toolu_%d_%d", len(req.Messages), i), name, toolArgs(name, a.report))
		}
		clitest.ToolUseEnd(event)
	}
	switch {
	case len(results) > 0:
		// Answer below.
	case slices.Contains(offered, "mcp__baton__submit_session_handoff"):
		toolUses("mcp__baton__get_handoff_facts", "mcp__baton__submit_session_handoff")
		return
	case slices.Contains(offered, "mcp__baton__read_source_history"):
		toolUses("mcp__baton__read_source_history", "mcp__baton__get_handoff_facts")
		return
	}
	clitest.MessageText(event, replyText(results))
}

// contentText joins the text of a tool_result's content (a string or text
// blocks).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// TestClaudeTransferOverMCP drives the real Claude Code CLI, configured by
// Wiring.Claude, through a transfer with GenerateSummary on a Coordinator:
// the report-only turn calls mcp__baton__submit_session_handoff on baton's
// MCP server (HTTP on 127.0.0.1) with the attempt's credentials, the
// transfer completes with that report, and the target's first turn calls
// mcp__baton__read_source_history, whose page (the source conversation,
// redacted) the CLI sends to the API in its next request.
func TestClaudeTransferOverMCP(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api := newMessagesAPI(t, e2eReport)
	env := clitest.ClaudeEnv(clitest.Dir(t, t.TempDir(), "home"), api.srv.URL)
	r := transferE2E(t, rigOpts{engine: "claude", model: "claude-test-1", env: env, profile: func(w *batonmcp.Wiring) exec.Profile {
		return w.Claude(exec.ClaudeOptions{Command: bin})
	}}, &api.toolLog, "claude-test-2", func(res toolResult, tool string) bool {
		return res.Tool == "mcp__baton__"+tool && !res.IsError
	})

	// The tools each turn was offered: the report scope's during the
	// report-only turn, the target scope's afterwards, none before.
	offered := api.offeredTools()
	want := map[string]bool{
		"": true, // the source's turn
		"mcp__baton__get_handoff_facts,mcp__baton__submit_session_handoff": true,
		"mcp__baton__get_handoff_facts,mcp__baton__read_source_history":    true,
	}
	seen := map[string]bool{}
	for _, o := range offered {
		k := strings.Join(o, ",")
		if !want[k] {
			t.Errorf("a request offered the baton tools %q", k)
		}
		seen[k] = true
	}
	if len(seen) != len(want) {
		t.Errorf("tool sets offered: %v; want each of %v", seen, want)
	}

	// The MCP exchange: initialize (protocol 2025-11-25), tools/list and
	// tools/call, each turn on its own connection.
	methods, versions := r.mcp.seen()
	for _, m := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call"} {
		if !slices.Contains(methods, m) {
			t.Errorf("the CLI never sent %s: %q", m, methods)
		}
	}
	if len(versions) < 2 || slices.ContainsFunc(versions, func(v string) bool { return v != "2025-11-25" }) {
		t.Errorf("initialize asked for protocol versions %q; want 2025-11-25 at each turn", versions)
	}
}
