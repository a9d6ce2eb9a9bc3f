//go:build linux

package main

import (
	"net/http"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecEngine: with -engine claude the server runs the agent CLI as a
// child process per turn (package engine/exec); here a stand-in script
// prints what Claude Code's headless mode prints. A session starts with
// the CLI's session id, and a transfer between two of its models
// completes, resuming nothing and starting the target fresh.
func TestExecEngine(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"sh", "sed", "curl"} {
		if _, err := osexec.LookPath(tool); err != nil {
			t.Skipf("the stand-in CLI needs %s: %v", tool, err)
		}
	}
	fake, err := filepath.Abs("testdata/fake-claude")
	if err != nil {
		t.Fatal(err)
	}
	p := startBinary(t, "", "-engine", "claude", "-claude-bin", fake)
	r := p.must(http.StatusOK, "GET", "/api/engines", nil)
	if !strings.Contains(string(r.Raw), `"claude"`) {
		t.Fatalf("engines = %s", r.Raw)
	}
	r = p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "real", "engine": "claude", "model": "sonnet"})
	ws := str(r.Body, "workspace", "id")
	r = p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": "Fix the parser."})
	src, native := str(r.Body, "session", "id"), str(r.Body, "session", "nativeId")
	if !strings.HasPrefix(native, "fake-") {
		t.Fatalf("native id %q, want the CLI's session id", native)
	}
	p.waitIdle(ws)
	body := handoffReq("real-1", src, "opus", false)
	body["target"] = map[string]any{"engine": "claude", "model": "opus"}
	hid := str(p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", body).Body, "handoff", "id")
	h := p.waitHandoff(ws, hid, "completed", "failed")
	if h["state"] != "completed" {
		t.Fatalf("transfer = %v\n%s", h, p.logs.String())
	}
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
	ss := r.Body["sessions"].([]any)
	target := ss[len(ss)-1].(map[string]any)
	if target["engine"] != "claude" || target["model"] != "opus" || target["nativeId"] == native || !strings.HasPrefix(target["nativeId"].(string), "fake-") {
		t.Errorf("target session = %v", target)
	}

	// With a report: the CLI's report-only turn submits it through the
	// server's MCP endpoint, with the attempt's token from its
	// --mcp-config file.
	p.waitIdle(ws)
	cur := str(p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil).Body, "workspace", "currentSessionId")
	body = handoffReq("real-2", cur, "sonnet", true)
	body["target"] = map[string]any{"engine": "claude", "model": "sonnet"}
	hid = str(p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", body).Body, "handoff", "id")
	h = p.waitHandoff(ws, hid, "completed", "failed")
	if h["state"] != "completed" || !strings.Contains(str(h, "report"), "through the MCP endpoint") {
		t.Fatalf("transfer with a report = %v\n%s", h, p.logs.String())
	}
	if r := p.do("POST", "/api/workspaces", map[string]any{"name": "x", "engine": "codex", "model": "m"}); r.Status != http.StatusBadRequest {
		t.Errorf("an engine not asked for = %d %s", r.Status, r.Raw)
	}
}
