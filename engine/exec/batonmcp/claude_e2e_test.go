//go:build linux

package batonmcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/batonmcp"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
)

// claudeBin finds the Claude Code CLI: $BATON_CLAUDE_BIN, else claude on
// PATH. Without it the test is skipped, except under CI=true, where it
// fails.
func claudeBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BATON_CLAUDE_BIN"); p != "" {
		return p
	}
	if p, err := osexec.LookPath("claude"); err == nil {
		return p
	}
	msg := "the Claude Code CLI is not installed: set BATON_CLAUDE_BIN or put claude on PATH (npm install @anthropic-ai/claude-code)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

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

	mu      sync.Mutex
	results []toolResult  // tool results the CLI sent back
	offered [][]string    // the baton tools each streamed request offered
	got     chan struct{} // receives at each tool result
}

// toolResult is a tool_result block the CLI sent to the API.
type toolResult struct {
	Tool    string // the name of the tool called
	IsError bool
	Text    string
}

const sourceReply = "I fixed the tokenizer in parse.go; TestParse passes now."

func newMessagesAPI(t *testing.T, report string) *messagesAPI {
	a := &messagesAPI{report: report, got: make(chan struct{}, 16)}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *messagesAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		w.WriteHeader(http.StatusOK)
		return
	}
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
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
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
	a.mu.Lock()
	a.offered = append(a.offered, offered)
	a.results = append(a.results, results...)
	a.mu.Unlock()
	for range results {
		a.got <- struct{}{}
	}

	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	event := func(name, data string) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		if f != nil {
			f.Flush()
		}
	}
	event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`, req.Model))
	// toolUses answers with calls of the tools named, in one message.
	toolUses := func(calls ...string) {
		for i, name := range calls {
			var input any = map[string]any{}
			switch name {
			case "mcp__baton__submit_session_handoff":
				input = map[string]string{"report": a.report}
			case "mcp__baton__read_source_history":
				input = map[string]string{"direction": "oldest-first"}
			}
			in, _ := json.Marshal(input)
			q, _ := json.Marshal(string(in))
			event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":"toolu_%d_%d","name":%q,"input":{}}}`, i, len(req.Messages), i, name))
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, q))
			event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		}
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`)
		event("message_stop", `{"type":"message_stop"}`)
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
	text := sourceReply
	if len(results) > 0 {
		text = "Done."
	}
	q, _ := json.Marshal(text)
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`)
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`)
	event("message_stop", `{"type":"message_stop"}`)
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

func (a *messagesAPI) toolResults() []toolResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.results)
}

// TestClaudeTransferOverMCP drives the real Claude Code CLI, configured by
// Wiring.Claude, through a transfer with GenerateSummary on a Coordinator:
// the report-only turn calls mcp__baton__submit_session_handoff on baton's
// MCP server (HTTP on 127.0.0.1) with the attempt's credentials, the
// transfer completes with that report, and the target's first turn calls
// mcp__baton__read_source_history, whose page (the source conversation,
// redacted) the CLI sends to the API in its next request.
func TestClaudeTransferOverMCP(t *testing.T) {
	bin := claudeBin(t)
	const report = "## Handoff\nThe tokenizer in parse.go is fixed; TestParse passes. Next: the error messages."
	const secret = "hunter2-correct-horse"
	api := newMessagesAPI(t, report)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"ANTHROPIC_BASE_URL=" + api.srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
	}
	r := newRig(t, rigOpts{
		engine: "claude", model: "claude-test-1", env: env, timeout: 90 * time.Second,
		limits:  recap.Limits{Secrets: []string{secret}},
		profile: func(w *batonmcp.Wiring) exec.Profile { return w.Claude(exec.ClaudeOptions{Command: bin}) },
	})
	src := r.source(t, "Fix the parser. The staging password is "+secret+".")

	h := r.transfer(t, src.ID, "claude-test-2")
	if h.State != store.StateCompleted {
		t.Fatalf("the transfer settled %s (%s); want completed", h.State, h.Error)
	}
	if !h.HasReport || h.Report != report {
		t.Errorf("the stored report = %q (HasReport %v); want %q", h.Report, h.HasReport, report)
	}

	// The target's first turn reads the history; its tool result reaches
	// the API in the next request. Four tool results in all.
	for i := range 4 {
		select {
		case <-api.got:
		case <-r.ctx.Done():
			t.Fatalf("%d tool results reached the API; want 4: %+v", i, api.toolResults())
		}
	}
	r.idle(t)
	res := api.toolResults()
	if len(res) != 4 {
		t.Fatalf("tool results = %+v; want 4", res)
	}
	for i, tool := range []string{"get_handoff_facts", "submit_session_handoff", "read_source_history", "get_handoff_facts"} {
		if res[i].Tool != "mcp__baton__"+tool || res[i].IsError {
			t.Errorf("tool result %d = %+v; want a result of %s", i, res[i], tool)
		}
	}
	// Claude Code hands the model a tool's structured content when it has
	// one, in place of its text.
	if sub := res[1]; !strings.Contains(sub.Text, `"stored":true`) {
		t.Errorf("the submission's result = %+v; want the report stored", sub)
	}
	for _, i := range []int{0, 3} {
		if !strings.Contains(res[i].Text, "not a git repository") {
			t.Errorf("the facts' result = %+v; want the note on the workspace", res[i])
		}
	}
	hist := res[2]
	for _, want := range []string{"Fix the parser. The staging password is " + recap.Redacted, sourceReply} {
		if !strings.Contains(hist.Text, want) {
			t.Errorf("the history page lacks %q:\n%s", want, hist.Text)
		}
	}
	if strings.Contains(hist.Text, secret) {
		t.Errorf("the history page holds the secret:\n%s", hist.Text)
	}

	// The tools each turn was offered: the report scope's during the
	// report-only turn, the target scope's afterwards, none before.
	api.mu.Lock()
	offered := slices.Clone(api.offered)
	api.mu.Unlock()
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
