//go:build linux

package exec_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/transcript"
)

// newScriptedAPI is the stand-in for the Messages API: its reply names
// the model it was asked for; a prompt holding "REPORT" gets reportCalls,
// one holding "STALL" the start of a message and then nothing, until the
// CLI goes away.
func newScriptedAPI(t *testing.T) (*clitest.API, *clitest.Gate) {
	stall := clitest.NewGate()
	api := clitest.NewMessages(t, func(r clitest.Request) clitest.Reply {
		last := r.LastUser()
		switch {
		case strings.Contains(last, "REPORT") && len(r.Results()) == 0:
			return clitest.Calls(reportCalls...)
		case strings.Contains(last, "STALL"):
			return clitest.Reply{Wait: stall}
		}
		return clitest.Text("reply from " + r.Model)
	})
	return api, stall
}

// reportCalls are the scripted answer to a prompt holding "REPORT": the
// model calls a tool the report-only turn does not allow, and the report
// tool.
var reportCalls = []clitest.Call{
	{Name: "mcp__baton__discard_workspace"},
	{Name: "mcp__baton__submit_session_handoff", Input: map[string]string{"report": "All done; tests pass."}},
}

// TestClaudeEndToEnd drives the real Claude Code CLI through the claude
// profile against the scripted API on 127.0.0.1: a fresh start reaching
// ready with its native id, a resume by that id, the native path (a resume
// under another model), and a confirmed stop in the middle of a turn.
func TestClaudeEndToEnd(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api, stall := newScriptedAPI(t)
	e, work := cliEngine(t, exec.Claude(exec.ClaudeOptions{Command: bin}), api.ClaudeEnv)
	ctx := testCtx(t)
	first := baton.EngineConfig{Engine: "claude", Model: "claude-test-1"}
	other := baton.EngineConfig{Engine: "claude", Model: "claude-other-2"}

	turn := func(req engine.StartRequest) string {
		t.Helper()
		return cliTurn(t, ctx, e, work, req)
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
	reqs := api.Streamed()
	if len(reqs) != 3 {
		t.Fatalf("the API got %d streamed requests; want 3: %+v", len(reqs), reqs)
	}
	if reqs[0].Model != first.Model || reqs[1].Model != first.Model || reqs[2].Model != other.Model {
		t.Errorf("models asked for: %+v; want %s, %s, %s", reqs, first.Model, first.Model, other.Model)
	}
	if !(len(reqs[0].Messages) < len(reqs[1].Messages) && len(reqs[1].Messages) < len(reqs[2].Messages)) {
		t.Errorf("the resumed turns did not carry the conversation: message counts %+v", reqs)
	}
	replies := agentReplies(t, e, "s1")
	if want := []string{"reply from claude-test-1", "reply from claude-test-1", "reply from claude-other-2"}; strings.Join(replies, "|") != strings.Join(want, "|") {
		t.Errorf("transcript replies = %q; want %q", replies, want)
	}

	// A confirmed stop while the API holds the turn.
	launch := newLaunchID("claude-stall")
	p := cliStart(t, ctx, e, work, engine.StartRequest{Config: first, Mode: engine.Resume, NativeID: id, Prompt: "STALL please", LaunchID: launch})
	stopMidTurn(t, ctx, e, p, stall.Held(), launch)
}

// TestClaudeReportsWhatRan: Claude Code may send the API another model
// than the --model it was given (2.1.197 sends claude-opus-4-8 for
// claude-opus-4-1) and says so in its init line; the process reports
// that model, the one the API really got, and the CLI's version.
func TestClaudeReportsWhatRan(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api, _ := newScriptedAPI(t)
	e, work := cliEngine(t, exec.Claude(exec.ClaudeOptions{Command: bin}), api.ClaudeEnv)
	ctx := testCtx(t)
	for _, asked := range []string{"claude-opus-4-1", "claude-test-1"} {
		before := len(api.Streamed())
		p := cliStart(t, ctx, e, work, engine.StartRequest{Config: baton.EngineConfig{Engine: "claude", Model: asked}, Prompt: "say hello"})
		if _, err := p.Ready(ctx); err != nil {
			t.Fatalf("Ready: %v (exit %+v)", err, waitDone(t, p))
		}
		waitDone(t, p)
		reqs := api.Streamed()[before:]
		if len(reqs) == 0 {
			t.Fatalf("--model %s: the API got no streamed request", asked)
		}
		got := p.Actual()
		if got.Model == "" || got.Model != reqs[0].Model {
			t.Errorf("--model %s: the process reports model %q; the API was asked for %q", asked, got.Model, reqs[0].Model)
		}
		if !regexp.MustCompile(`^\d+\.\d+\.\d+`).MatchString(got.Version) {
			t.Errorf("--model %s: the process reports version %q; want the CLI's", asked, got.Version)
		}
		t.Logf("--model %s: the API got %s; reported %+v", asked, reqs[0].Model, got)
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
	mcp.AddTool(s, &mcp.Tool{Name: "submit_session_handoff", Description: "Submit the session handoff report."},
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
	bin := clitest.ClaudeBin(t)
	api, _ := newScriptedAPI(t)
	mcpSrv := newReportServer(t)
	prof := exec.Claude(exec.ClaudeOptions{Command: bin})
	prof.LaunchExtra = reportMCP(mcpSrv.srv.URL)
	e, work := cliEngine(t, prof, api.ClaudeEnv)
	ctx := testCtx(t)
	cfg := baton.EngineConfig{Engine: "claude", Model: "claude-test-1"}
	run := func(req engine.StartRequest) string {
		t.Helper()
		req.Config = cfg
		return cliTurn(t, ctx, e, work, req)
	}
	id := run(engine.StartRequest{Prompt: "work on the task"})
	token := baton.NewToken()
	run(engine.StartRequest{Mode: engine.Resume, NativeID: id, Turn: transcript.ReportOnly, Prompt: "REPORT on your work",
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
	reqs := api.Streamed()
	res := reqs[len(reqs)-1].Results()
	if len(res) != 2 || res[0].Tool != reportCalls[0].Name || !res[0].IsError || res[1].IsError {
		t.Errorf("tool results %+v; want the refused call answered with an error, the report tool's without", res)
	}
}
