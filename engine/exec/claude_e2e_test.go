//go:build linux

package exec_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/recap"
)

// claudeBin finds the Claude Code CLI: $BATON_CLAUDE_BIN, else claude on
// PATH. Without it the test is skipped, except under CI=true, where it
// fails (.ci/run installs the CLI).
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

// scriptedAPI is the stand-in for the Messages API: it answers HEAD / and
// replays a canned streaming response to POST /v1/messages. The reply
// names the model it was asked for; a prompt holding "STALL" gets the start
// of a message and then nothing, until the client goes away.
type scriptedAPI struct {
	srv     *httptest.Server
	quit    chan struct{}
	stalled chan struct{} // receives when a stalled request is being held

	mu       sync.Mutex
	requests []apiRequest
}

type apiRequest struct {
	Model    string
	Messages int
	Stream   bool
	Last     string // the last message, raw
}

// reportToolUse is the scripted answer to a prompt holding "REPORT": the
// model calls a tool the report-only turn does not allow, and the report
// tool.
const reportToolUse = `[{"type":"tool_use","id":"toolu_1","name":"mcp__baton__discard_workspace","input":{}},` +
	`{"type":"tool_use","id":"toolu_2","name":"mcp__baton__submit_session_handoff","input":{"report":"All done; tests pass."}}]`

func newScriptedAPI(t *testing.T) *scriptedAPI {
	a := &scriptedAPI{quit: make(chan struct{}), stalled: make(chan struct{}, 1)}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(func() {
		close(a.quit)
		a.srv.Close()
	})
	return a
}

func (a *scriptedAPI) streamed() []apiRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []apiRequest
	for _, r := range a.requests {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

func (a *scriptedAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodHead || r.URL.Path != "/v1/messages" {
		w.WriteHeader(http.StatusOK)
		return
	}
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	last := string(req.Messages[len(req.Messages)-1])
	a.requests = append(a.requests, apiRequest{Model: req.Model, Messages: len(req.Messages), Stream: req.Stream, Last: last})
	a.mu.Unlock()
	text := "reply from " + req.Model
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`, req.Model, text)
		return
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
	if strings.Contains(last, "REPORT") && !strings.Contains(last, `"tool_result"`) {
		var blocks []json.RawMessage
		if err := json.Unmarshal([]byte(reportToolUse), &blocks); err != nil {
			panic(err)
		}
		for i, b := range blocks {
			var tu struct {
				ID, Name string
				Input    json.RawMessage
			}
			json.Unmarshal(b, &tu)
			event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, tu.ID, tu.Name))
			in, _ := json.Marshal(string(tu.Input))
			event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, in))
			event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
		}
		event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`)
		event("message_stop", `{"type":"message_stop"}`)
		return
	}
	if strings.Contains(last, "STALL") {
		select {
		case a.stalled <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-a.quit:
		}
		return
	}
	q, _ := json.Marshal(text)
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`)
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`)
	event("message_stop", `{"type":"message_stop"}`)
}

// TestClaudeEndToEnd drives the real Claude Code CLI through the claude
// profile against the scripted API on 127.0.0.1: a fresh start reaching
// ready with its native id, a resume by that id, the native path (a resume
// under another model), and a confirmed stop in the middle of a turn.
func TestClaudeEndToEnd(t *testing.T) {
	bin := claudeBin(t)
	api := newScriptedAPI(t)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"ANTHROPIC_BASE_URL=" + api.srv.URL,
		"ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
	}
	e := newEngine(t, exec.Options{Profile: exec.Claude(exec.ClaudeOptions{Command: bin}), DataDir: filepath.Join(root, "data"), Env: env})
	ctx := testCtx(t)
	first := baton.EngineConfig{Engine: "claude", Model: "claude-test-1"}
	other := baton.EngineConfig{Engine: "claude", Model: "claude-other-2"}

	turn := func(req engine.StartRequest) string {
		t.Helper()
		req.Workspace, req.Session, req.Dir = "ws", "s1", work
		p, err := e.Start(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		id, err := p.Ready(ctx)
		if err != nil {
			t.Fatalf("Ready: %v (exit %+v)", err, waitDone(t, p))
		}
		if x := waitDone(t, p); !x.Clean() {
			t.Fatalf("Exit = %+v", x)
		}
		return id
	}

	id := turn(engine.StartRequest{Config: first, Prompt: "say hello"})
	if len(id) != 36 || strings.Count(id, "-") != 4 {
		t.Fatalf("native id %q is not a session UUID", id)
	}
	if got := turn(engine.StartRequest{Config: first, Mode: engine.Resume, NativeID: id, Prompt: "again"}); got != id {
		t.Fatalf("resume answered native id %q; want %q", got, id)
	}
	if !e.CanReconfigure(first, other) {
		t.Fatal("the claude profile cannot reconfigure")
	}
	if got := turn(engine.StartRequest{Config: other, Mode: engine.Resume, NativeID: id, Prompt: "and now?"}); got != id {
		t.Fatalf("resume under another model answered native id %q; want %q", got, id)
	}
	reqs := api.streamed()
	if len(reqs) != 3 {
		t.Fatalf("the API got %d streamed requests; want 3: %+v", len(reqs), reqs)
	}
	if reqs[0].Model != first.Model || reqs[1].Model != first.Model || reqs[2].Model != other.Model {
		t.Errorf("models asked for: %+v; want %s, %s, %s", reqs, first.Model, first.Model, other.Model)
	}
	if !(reqs[0].Messages < reqs[1].Messages && reqs[1].Messages < reqs[2].Messages) {
		t.Errorf("the resumed turns did not carry the conversation: message counts %+v", reqs)
	}
	var replies []string
	for _, ev := range events(t, e, "s1") {
		if ev.Speaker == recap.Agent && ev.Kind == recap.Message {
			replies = append(replies, ev.Text)
		}
	}
	if want := []string{"reply from claude-test-1", "reply from claude-test-1", "reply from claude-other-2"}; strings.Join(replies, "|") != strings.Join(want, "|") {
		t.Errorf("transcript replies = %q; want %q", replies, want)
	}

	// A confirmed stop while the API holds the turn.
	stall := newLaunchID("claude-stall")
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Dir: work, Config: first, Mode: engine.Resume, NativeID: id, Prompt: "STALL please", LaunchID: stall})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-api.stalled:
	case <-ctx.Done():
		t.Fatalf("the CLI never reached the API (exit %+v)", p.Exit())
	}
	t0 := time.Now()
	if o, err := p.Stop(ctx); o != engine.Stopped || err != nil {
		t.Fatalf("Stop mid-turn = %s, %v; want stopped", o, err)
	}
	t.Logf("confirmed stop mid-turn in %s (exit %+v)", time.Since(t0), p.Exit())
	if _, err := p.Ready(ctx); !errors.Is(err, engine.ErrExitedBeforeReady) {
		t.Errorf("Ready after a stop mid-turn = %v; want ErrExitedBeforeReady", err)
	}
	if x := p.Exit(); !x.Stopped {
		t.Errorf("Exit = %+v; want stopped", x)
	}
	if o, err := e.ReapLaunch(ctx, stall); o != engine.NotRunning || err != nil {
		t.Errorf("after the stop, ReapLaunch = %s, %v; want not-running", o, err)
	}
}

// reportServer is a stand-in for the host's MCP server: it offers the
// report tool and a tool no report-only turn may call, and records calls.
type reportServer struct {
	srv *httptest.Server

	mu        sync.Mutex
	reports   []string
	tokens    []string
	discarded int
}

func newReportServer(t *testing.T) *reportServer {
	r := &reportServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "baton"}, nil)
	type reportArgs struct {
		Report string `json:"report" jsonschema:"the handoff report"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: exec.ReportTool, Description: "Submit the session handoff report."},
		func(ctx context.Context, req *mcp.CallToolRequest, a reportArgs) (*mcp.CallToolResult, any, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.reports = append(r.reports, a.Report)
			r.tokens = append(r.tokens, req.Extra.Header.Get("X-Baton-Token")+" "+req.Extra.Header.Get("X-Baton-Handoff"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stored"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "discard_workspace", Description: "Delete the workspace."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.discarded++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "discarded"}}}, nil, nil
		})
	r.srv = httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	t.Cleanup(r.srv.Close)
	return r
}

// TestClaudeReportOnlyEndToEnd: a report-only turn of the real CLI reaches
// the report tool through the MCP configuration the profile writes (with
// the turn's credentials), and only it: the model's call of another tool
// of the same server is refused by the CLI and never reaches the server.
func TestClaudeReportOnlyEndToEnd(t *testing.T) {
	bin := claudeBin(t)
	api := newScriptedAPI(t)
	mcpSrv := newReportServer(t)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"ANTHROPIC_BASE_URL=" + api.srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
	}
	prof := exec.Claude(exec.ClaudeOptions{
		Command:   bin,
		MCPConfig: `{"mcpServers":{"baton":{"type":"http","url":"` + mcpSrv.srv.URL + `","headers":{"X-Baton-Token":"{report_token}","X-Baton-Handoff":"{handoff}"}}}}`,
	})
	e := newEngine(t, exec.Options{Profile: prof, DataDir: filepath.Join(root, "data"), Env: env})
	ctx := testCtx(t)
	cfg := baton.EngineConfig{Engine: "claude", Model: "claude-test-1"}
	run := func(req engine.StartRequest) string {
		t.Helper()
		req.Workspace, req.Session, req.Dir, req.Config = "ws", "s1", work, cfg
		p, err := e.Start(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		id, err := p.Ready(ctx)
		if err != nil {
			t.Fatalf("Ready: %v (exit %+v)", err, waitDone(t, p))
		}
		if x := waitDone(t, p); !x.Clean() {
			t.Fatalf("Exit = %+v", x)
		}
		return id
	}
	id := run(engine.StartRequest{Prompt: "work on the task"})
	token := baton.NewToken()
	run(engine.StartRequest{Mode: engine.Resume, NativeID: id, Turn: engine.ReportOnly, Prompt: "REPORT on your work",
		Report: &engine.ReportCredentials{Workspace: "ws", Handoff: "h1", Attempt: 1, Token: token}})

	mcpSrv.mu.Lock()
	defer mcpSrv.mu.Unlock()
	if len(mcpSrv.reports) != 1 || mcpSrv.reports[0] != "All done; tests pass." {
		t.Errorf("reports received: %q; want the one report", mcpSrv.reports)
	}
	if want := token.Reveal() + " h1"; len(mcpSrv.tokens) != 1 || mcpSrv.tokens[0] != want {
		t.Errorf("the report came without the turn's credentials")
	}
	if mcpSrv.discarded != 0 {
		t.Errorf("a tool outside --allowedTools ran %d times", mcpSrv.discarded)
	}
	reqs := api.streamed()
	if last := reqs[len(reqs)-1].Last; !strings.Contains(last, `"tool_use_id":"toolu_1"`) || !strings.Contains(last, `"is_error":true`) {
		t.Errorf("the refused tool call was not answered with an error: %s", last)
	}
}
