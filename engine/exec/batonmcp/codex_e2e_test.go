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

// codexBin finds the Codex CLI: $BATON_CODEX_BIN, else codex on PATH.
// Without it the test is skipped, except under CI=true, where it fails.
func codexBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BATON_CODEX_BIN"); p != "" {
		return p
	}
	if p, err := osexec.LookPath("codex"); err == nil {
		return p
	}
	msg := "the Codex CLI is not installed: set BATON_CODEX_BIN or put codex on PATH (npm install @openai/codex)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// responsesAPI stands in for the Responses API Codex streams from. Its
// model calls the baton tools of the request (by the suffix of their
// names) as messagesAPI's does, and records what comes back.
type responsesAPI struct {
	srv    *httptest.Server
	report string

	mu      sync.Mutex
	results []toolResult
	offered [][]string // the tool names each request offered
	got     chan struct{}
}

func newResponsesAPI(t *testing.T, report string) *responsesAPI {
	a := &responsesAPI{report: report, got: make(chan struct{}, 16)}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *responsesAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
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
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
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
	event("response.created", `{"type":"response.created","response":{"id":"resp_1"}}`)
	done := func() {
		event("response.completed", `{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":10,"input_tokens_details":null,"output_tokens":5,"output_tokens_details":null,"total_tokens":15}}}`)
	}
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
			var input any = map[string]any{}
			switch {
			case strings.HasSuffix(name, "submit_session_handoff"):
				input = map[string]string{"report": a.report}
			case strings.HasSuffix(name, "read_source_history"):
				input = map[string]string{"direction": "oldest-first"}
			}
			args, _ := json.Marshal(input)
			ns, fn, _ := strings.Cut(name, "/")
			item, _ := json.Marshal(map[string]string{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", len(req.Input), i),
				"call_id": fmt.Sprintf("call_%d_%d", len(req.Input), i), "namespace": ns, "name": fn, "arguments": string(args)})
			event("response.output_item.done", `{"type":"response.output_item.done","item":`+string(item)+`}`)
		}
		done()
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
	text := sourceReply
	if len(results) > 0 {
		text = "Done."
	}
	q, _ := json.Marshal(text)
	event("response.output_item.done", `{"type":"response.output_item.done","item":{"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":`+string(q)+`}]}}`)
	done()
}

func (a *responsesAPI) toolResults() []toolResult {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.results)
}

// TestCodexTransferOverMCP is TestClaudeTransferOverMCP with the real
// Codex CLI, configured by Wiring.Codex, against a scripted Responses API.
func TestCodexTransferOverMCP(t *testing.T) {
	bin := codexBin(t)
	const report = "## Handoff\nThe tokenizer in parse.go is fixed; TestParse passes. Next: the error messages."
	const secret = "hunter2-correct-horse"
	api := newResponsesAPI(t, report)
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "OPENAI_API_KEY=sk-test"}
	r := newRig(t, rigOpts{
		engine: "codex", model: "gpt-test-1", env: env, timeout: 90 * time.Second,
		limits: recap.Limits{Secrets: []string{secret}},
		profile: func(w *batonmcp.Wiring) exec.Profile {
			return w.Codex(exec.CodexOptions{Command: bin, Config: []string{
				"model_provider=scripted",
				`model_providers.scripted={name="scripted",base_url="` + api.srv.URL + `/v1",wire_api="responses",env_key="OPENAI_API_KEY",stream_max_retries=0,request_max_retries=0}`,
			}})
		},
	})
	src := r.source(t, "Fix the parser. The staging password is "+secret+".")
	h := r.transfer(t, src.ID, "gpt-test-2")
	if h.State != store.StateCompleted {
		t.Fatalf("the transfer settled %s (%s); want completed; tool results %+v", h.State, h.Error, api.toolResults())
	}
	if !h.HasReport || h.Report != report {
		t.Errorf("the stored report = %q (HasReport %v); want %q", h.Report, h.HasReport, report)
	}
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
		if !strings.HasSuffix(res[i].Tool, tool) {
			t.Errorf("tool result %d = %+v; want a result of %s", i, res[i], tool)
		}
	}
	// Codex hands the model the structured content, after a line of its
	// own.
	if !strings.Contains(res[1].Text, `"stored":true`) {
		t.Errorf("the submission's result = %+v; want the report stored", res[1])
	}
	for _, i := range []int{0, 3} {
		if !strings.Contains(res[i].Text, "not a git repository") {
			t.Errorf("the facts' result = %+v; want the note on the workspace", res[i])
		}
	}
	hist := res[2].Text
	for _, want := range []string{"Fix the parser. The staging password is " + recap.Redacted, sourceReply} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history page lacks %q:\n%s", want, hist)
		}
	}
	if strings.Contains(hist, secret) {
		t.Errorf("the history page holds the secret:\n%s", hist)
	}

	// The baton tools each request offered: none to the source's turn,
	// the report scope's, then the target scope's.
	api.mu.Lock()
	offered := slices.Clone(api.offered)
	api.mu.Unlock()
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
