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

// responsesAPI stands in for the Responses API Codex streams from. Its
// model calls the baton tools of the request (by the suffix of their
// names) as messagesAPI's does, and records what comes back.
type responsesAPI struct {
	srv    *httptest.Server
	report string
	toolLog
}

func newResponsesAPI(t *testing.T, report string) *responsesAPI {
	a := &responsesAPI{report: report, toolLog: newToolLog()}
	a.srv = clitest.API(t, "/v1/responses", http.StatusNotFound, a.serve)
	return a
}

func (a *responsesAPI) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Input []struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Namespace string          `json:"namespace"`
			Name      string          `json:"name"`
			CallID    string          `json:"call_id"`
			Output    json.RawMessage `json:"output"`
			Arguments string          `json:"arguments"`
		} `json:"input"`
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"` // of a namespace: an MCP server's
		} `json:"tools"`
	}
	if !clitest.DecodeJSON(w, r, &req) {
		return
	}
	var offered []string
	for _, tl := range req.Tools {
		if tl.Type != "namespace" {
			offered = append(offered, tl.Name)
		}
		for _, sub := range tl.Tools {
			offered = append(offered, tl.Name+"/"+sub.Name)
		}
	}
	calls := map[string]string{}
	var results []toolResult
	for i, in := range req.Input {
		switch in.Type {
		case "function_call":
			calls[in.CallID] = in.Namespace + "/" + in.Name
		case "function_call_output":
			// Only the outputs after the last user message are new.
			newer := true
			for _, later := range req.Input[i:] {
				newer = newer && later.Role != "user"
			}
			if newer {
				var s string
				if json.Unmarshal(in.Output, &s) != nil {
					s = string(in.Output)
				}
				results = append(results, toolResult{Tool: calls[in.CallID], Text: s})
			}
		}
	}
	last := req.Input[len(req.Input)-1].Type
	if last != "function_call_output" {
		results = nil
	}
	a.record(offered, results)
	event := clitest.SSE(w)
	clitest.ResponseCreated(event)
	find := func(suffix string) string {
		for _, n := range offered {
			if strings.HasSuffix(n, suffix) {
				return n
			}
		}
		return ""
	}
	call := func(names ...string) {
		for i, name := range names {
			args := toolArgs(name, a.report)
			ns, fn, _ := strings.Cut(name, "/")
			item, _ := json.Marshal(map[string]string{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", len(req.Input), i),
				"call_id": fmt.Sprintf("call_%d_%d", len(req.Input), i), "namespace": ns, "name": fn, "arguments": string(args)})
			event("response.output_item.done", `{"type":"response.output_item.done","item":`+string(item)+`}`)
		}
		clitest.ResponseCompleted(event)
	}
	switch {
	case len(results) > 0:
	case find("submit_session_handoff") != "":
		call(find("get_handoff_facts"), find("submit_session_handoff"))
		return
	case find("read_source_history") != "":
		call(find("read_source_history"), find("get_handoff_facts"))
		return
	}
	clitest.ResponseText(event, replyText(results))
}

// TestCodexTransferOverMCP is TestClaudeTransferOverMCP with the real
// Codex CLI, configured by Wiring.Codex, against a scripted Responses API.
func TestCodexTransferOverMCP(t *testing.T) {
	bin := clitest.CodexBin(t)
	api := newResponsesAPI(t, e2eReport)
	env := clitest.CodexEnv(clitest.Dir(t, t.TempDir(), "home"))
	r := transferE2E(t, rigOpts{engine: "codex", model: "gpt-test-1", env: env, profile: func(w *batonmcp.Wiring) exec.Profile {
		return w.Codex(exec.CodexOptions{Command: bin, Config: clitest.CodexProvider(api.srv.URL)})
	}}, &api.toolLog, "gpt-test-2", func(res toolResult, tool string) bool {
		return strings.HasSuffix(res.Tool, tool)
	})

	// The baton tools each request offered: none to the source's turn,
	// the report scope's, then the target scope's.
	offered := api.offeredTools()
	var sets []string
	for _, o := range offered {
		var baton []string
		for _, n := range o {
			if strings.HasPrefix(n, "mcp__baton/") {
				baton = append(baton, n)
			}
		}
		slices.Sort(baton)
		if k := strings.Join(baton, ","); len(sets) == 0 || sets[len(sets)-1] != k {
			sets = append(sets, k)
		}
	}
	want := []string{"", "mcp__baton/get_handoff_facts,mcp__baton/submit_session_handoff", "mcp__baton/get_handoff_facts,mcp__baton/read_source_history"}
	if !slices.Equal(sets, want) {
		t.Errorf("the baton tools offered, turn after turn: %q; want %q", sets, want)
	}

	// The MCP exchange of each wired turn (Codex 0.171.0 asks for
	// protocol 2025-06-18); the source's ordinary turn has none.
	methods, versions := r.mcp.seen()
	turn := []string{"initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call"}
	if want := append(slices.Clone(turn), turn...); !slices.Equal(methods, want) {
		t.Errorf("MCP methods %q; want %q", methods, want)
	}
	t.Logf("initialize asked for protocol versions %q", versions)
}
