package clitest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	osexec "os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBin(t *testing.T) {
	t.Setenv("BATON_CLITEST_BIN", "/opt/tool")
	if got := Bin(t, "BATON_CLITEST_BIN", "baton-no-such-cli", "n/a"); got != "/opt/tool" {
		t.Errorf("Bin with the variable set = %q; want /opt/tool", got)
	}

	t.Setenv("BATON_CLITEST_BIN", "")
	t.Setenv("CI", "")
	returned := false
	ran := t.Run("missing", func(t *testing.T) {
		Bin(t, "BATON_CLITEST_BIN", "baton-no-such-cli", "n/a")
		returned = true
	})
	if !ran || returned {
		t.Errorf("Bin of a missing CLI outside CI: returned %v; want the test skipped", returned)
	}
	if _, err := LookBin("BATON_CLITEST_BIN", "baton-no-such-cli"); err == nil {
		t.Error("LookBin of a missing CLI: no error")
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("PATH", "/bin")
	want := []string{"PATH=/bin", "HOME=/h", "ANTHROPIC_BASE_URL=http://127.0.0.1:1", "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1"}
	if diff := cmp.Diff(want, ClaudeEnv("/h", "http://127.0.0.1:1")); diff != "" {
		t.Errorf("ClaudeEnv (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"PATH=/bin", "HOME=/h", "CODEX_HOME=/h", "OPENAI_API_KEY=sk-test"}, CodexEnv("/h")); diff != "" {
		t.Errorf("CodexEnv (-want +got):\n%s", diff)
	}
	if c := CodexConfig("http://127.0.0.1:1"); len(c) != 2 || !strings.Contains(c[1], `base_url="http://127.0.0.1:1/v1"`) {
		t.Errorf("CodexConfig = %q", c)
	}
	if d := Home(t); !isDir(d) {
		t.Errorf("Home = %q; not a directory", d)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// post sends body to url and returns the response's status and body.
func post(t *testing.T, ctx context.Context, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// events returns the data lines of a stream, in order.
func events(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

const messagesReq = `{"model":"m1","stream":true,"system":[{"type":"text","text":"Be brief."}],
"tools":[{"name":"Read"},{"name":"mcp__baton__read_source_history"}],
"messages":[{"role":"user","content":"Fix the parser."},
{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"t1","name":"Read","input":{"path":"a.go"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"no such file"}]}]}]}`

// TestMessages: the request as decoded, and each kind of reply as
// streamed (text, tool calls, failures, a held reply).
func TestMessages(t *testing.T) {
	replies := make(chan Reply, 1)
	api := NewMessages(t, func(r Request) Reply { return <-replies })
	ctx := Ctx(t, 30*time.Second)

	replies <- Calls(Call{Name: "mcp__baton__read_source_history", Input: map[string]string{"direction": "oldest-first"}})
	status, body := post(t, ctx, api.URL+"/v1/messages", messagesReq)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	got := api.Requests()[0]
	got.Body = nil
	want := Request{Model: "m1", Stream: true, System: "Be brief.", Tools: []string{"Read", "mcp__baton__read_source_history"},
		Messages: []Message{
			{Role: "user", Text: "Fix the parser."},
			{Role: "assistant", Text: "Reading.", ToolUses: []ToolUse{{ID: "t1", Name: "Read", Input: []byte(`{"path":"a.go"}`)}}},
			{Role: "user", ToolResults: []ToolResult{{ToolUseID: "t1", Tool: "Read", IsError: true, Text: "no such file"}}},
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.Messages[2].ToolResults, got.Results()); diff != "" {
		t.Errorf("Results (-want +got):\n%s", diff)
	}
	if got.LastUser() != "Fix the parser." {
		t.Errorf("LastUser = %q", got.LastUser())
	}
	if n, ok := got.Tool("read_source_history"); !ok || n != "mcp__baton__read_source_history" {
		t.Errorf("Tool = %q, %v", n, ok)
	}
	ev := events(body)
	if len(ev) != 6 || !strings.Contains(ev[1], `"name":"mcp__baton__read_source_history"`) ||
		!strings.Contains(ev[2], `"partial_json":"{\"direction\":\"oldest-first\"}"`) || !strings.Contains(ev[4], `"stop_reason":"tool_use"`) {
		t.Errorf("tool call stream:\n%s", strings.Join(ev, "\n"))
	}

	replies <- Text("Done.")
	_, body = post(t, ctx, api.URL+"/v1/messages", messagesReq)
	if ev := events(body); len(ev) != 6 || !strings.Contains(ev[2], `"text":"Done."`) || !strings.Contains(ev[4], `"stop_reason":"end_turn"`) {
		t.Errorf("text stream:\n%s", body)
	}

	replies <- Fail(529, "Overloaded")
	if status, body := post(t, ctx, api.URL+"/v1/messages", messagesReq); status != 529 || !strings.Contains(body, `"message":"Overloaded"`) {
		t.Errorf("Fail = %d %s", status, body)
	}
	replies <- Reply{Error: "boom"}
	if _, body := post(t, ctx, api.URL+"/v1/messages", messagesReq); !strings.Contains(body, "event: error") || !strings.Contains(body, `"boom"`) {
		t.Errorf("a failed stream: %s", body)
	}

	replies <- Text("ok")
	if status, body := post(t, ctx, api.URL+"/v1/messages", `{"model":"m1","messages":[{"role":"user","content":"hi"}]}`); status != 200 || !strings.Contains(body, `"text":"ok"`) {
		t.Errorf("a request not streamed: %d %s", status, body)
	}
	if len(api.Streamed()) != 4 || len(api.Requests()) != 5 {
		t.Errorf("%d streamed of %d requests; want 4 of 5", len(api.Streamed()), len(api.Requests()))
	}
	res, err := http.Head(api.URL + "/")
	if err != nil || res.StatusCode != 200 {
		t.Errorf("HEAD / = %v, %v", res, err)
	}

	// A held reply: the stream starts, and the rest comes once the gate
	// opens.
	g := NewGate()
	replies <- Reply{Text: "later", Wait: g}
	done := make(chan string, 1)
	go func() { _, b := post(t, ctx, api.URL+"/v1/messages", messagesReq); done <- b }()
	select {
	case <-g.Held():
	case <-ctx.Done():
		t.Fatal("the reply was never held")
	}
	select {
	case b := <-done:
		t.Fatalf("a held reply ended before the gate opened: %s", b)
	default:
	}
	g.Open()
	g.Open()
	if b := <-done; !strings.Contains(b, `"text":"later"`) {
		t.Errorf("the released reply: %s", b)
	}
}

// TestHoldUntilGone: a held reply ends when its client goes away.
func TestHoldUntilGone(t *testing.T) {
	g := NewGate()
	api := NewResponses(t, func(Request) Reply { return Reply{Text: "never", Wait: g} })
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/v1/responses", strings.NewReader(`{"model":"m","input":[]}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-g.Held()
	cancel()
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(b), "never") {
		t.Errorf("a reply held for a client that went away was sent: %s", b)
	}
	api.Close()
	api.Close()
}

const responsesReq = `{"model":"gpt-1","stream":true,"instructions":"Be brief.",
"tools":[{"type":"function","name":"shell"},{"type":"namespace","name":"mcp__baton","tools":[{"name":"submit_session_handoff"}]}],
"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Write the report."}]},
{"type":"function_call","namespace":"mcp__baton","name":"submit_session_handoff","call_id":"c1","arguments":"{\"report\":\"r\"}"},
{"type":"function_call_output","call_id":"c1","output":"{\"stored\":true}"}]}`

func TestResponses(t *testing.T) {
	replies := make(chan Reply, 1)
	api := NewResponses(t, func(r Request) Reply { return <-replies })
	ctx := Ctx(t, 30*time.Second)
	replies <- Reply{Text: "Calling.", Calls: []Call{{Name: "mcp__baton/submit_session_handoff", Input: map[string]string{"report": "x"}}}}
	_, body := post(t, ctx, api.URL+"/v1/responses", responsesReq)
	got := api.Requests()[0]
	got.Body = nil
	want := Request{Model: "gpt-1", Stream: true, System: "Be brief.", Tools: []string{"shell", "mcp__baton/submit_session_handoff"},
		Messages: []Message{
			{Role: "user", Text: "Write the report."},
			{Role: "assistant", ToolUses: []ToolUse{{ID: "c1", Name: "mcp__baton/submit_session_handoff", Input: []byte(`{"report":"r"}`)}}},
			{Role: "user", ToolResults: []ToolResult{{ToolUseID: "c1", Tool: "mcp__baton/submit_session_handoff", Text: `{"stored":true}`}}},
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded request (-want +got):\n%s", diff)
	}
	if len(got.Results()) != 1 {
		t.Errorf("Results = %+v", got.Results())
	}
	ev := events(body)
	if len(ev) != 4 || !strings.Contains(ev[1], `"Calling."`) || !strings.Contains(ev[2], `"namespace":"mcp__baton"`) ||
		!strings.Contains(ev[2], `"name":"submit_session_handoff"`) || !strings.Contains(ev[3], "response.completed") {
		t.Errorf("stream:\n%s", strings.Join(ev, "\n"))
	}
	replies <- Reply{Error: "scripted failure"}
	if _, body := post(t, ctx, api.URL+"/v1/responses", responsesReq); !strings.Contains(body, "response.failed") {
		t.Errorf("a failed stream: %s", body)
	}
	replies <- Fail(401, "Incorrect API key provided")
	if status, body := post(t, ctx, api.URL+"/v1/responses", responsesReq); status != 401 || !strings.Contains(body, "Incorrect API key") {
		t.Errorf("Fail = %d %s", status, body)
	}
	if res, err := http.Get(api.URL + "/v1/models"); err != nil || res.StatusCode != 404 {
		t.Errorf("GET /v1/models = %v, %v", res, err)
	}
	if !slices.Equal(api.CodexConfig(), CodexConfig(api.URL)) {
		t.Error("API.CodexConfig differs from CodexConfig")
	}
}

// TestPinned: the CI script installs the versions this package says are
// verified.
func TestPinned(t *testing.T) {
	b, err := os.ReadFile("../../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{ClaudePackage, CodexPackage} {
		if !strings.Contains(string(b), `"`+pkg+`"`) {
			t.Errorf(".ci/run does not install %s", pkg)
		}
	}
}

// TestVerifiedVersions: the CLIs the end-to-end tests run are the
// verified versions. A mismatch fails under CI=true (an upgrade is
// deliberate: change ClaudeVersion and CodexVersion with a test run of
// their own) and is logged otherwise.
func TestVerifiedVersions(t *testing.T) {
	for _, tc := range []struct {
		bin  func(testing.TB) string
		want string
	}{
		{ClaudeBin, ClaudeVersion},
		{CodexBin, CodexVersion},
	} {
		bin := tc.bin(t)
		out, err := osexec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", bin, err)
		}
		if got := strings.TrimSpace(string(out)); !slices.Contains(strings.Fields(got), tc.want) {
			if os.Getenv("CI") == "true" {
				t.Errorf("%s is %q; the tests are verified with %s", bin, got, tc.want)
			} else {
				t.Logf("%s is %q; the tests are verified with %s", bin, got, tc.want)
			}
		}
	}
}

// TestTransfer: what the scripted agent of a transfer answers, request by
// request, and the target request it holds.
func TestTransfer(t *testing.T) {
	g := NewGate()
	g.Open()
	var held []int
	s := Transfer{Reply: "src", Report: "rep", Hold: func(n int) *Gate {
		held = append(held, n)
		if n == 2 {
			return g
		}
		return nil
	}}.Script()
	user := Message{Role: "user", Text: "go"}
	results := Message{Role: "user", ToolResults: []ToolResult{{ToolUseID: "t1"}}}
	for _, tc := range []struct {
		name string
		req  Request
		want Reply
	}{
		{"ordinary", Request{Stream: true, Tools: []string{"Read"}, Messages: []Message{user}}, Text("src")},
		{"not streamed", Request{Tools: []string{"mcp__baton__submit_session_handoff"}, Messages: []Message{user}}, Text("src")},
		{"report", Request{Stream: true, Tools: []string{"mcp__baton__get_handoff_facts", "mcp__baton__submit_session_handoff"}, Messages: []Message{user}},
			Calls(Call{Name: "mcp__baton__get_handoff_facts"}, Call{Name: "mcp__baton__submit_session_handoff", Input: map[string]string{"report": "rep"}})},
		{"target", Request{Stream: true, Tools: []string{"mcp__baton/read_source_history", "mcp__baton/get_handoff_facts"}, Messages: []Message{user}},
			Calls(Call{Name: "mcp__baton/read_source_history", Input: map[string]string{"direction": "oldest-first"}}, Call{Name: "mcp__baton/get_handoff_facts"})},
		{"second target", Request{Stream: true, Tools: []string{"mcp__baton/read_source_history", "mcp__baton/get_handoff_facts"}, Messages: []Message{user}},
			Reply{Calls: []Call{{Name: "mcp__baton/read_source_history", Input: map[string]string{"direction": "oldest-first"}}, {Name: "mcp__baton/get_handoff_facts"}}, Wait: g}},
		{"results", Request{Stream: true, Tools: []string{"mcp__baton/read_source_history"}, Messages: []Message{user, results}}, Text("Done.")},
	} {
		if diff := cmp.Diff(tc.want, s(tc.req), cmp.Comparer(func(a, b *Gate) bool { return a == b })); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if !slices.Equal(held, []int{1, 2}) {
		t.Errorf("Hold was asked for %v; want the targets 1 and 2", held)
	}
}
