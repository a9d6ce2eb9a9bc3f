//go:build linux

package exec_test

import (
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

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/recap"
)

// codexBin finds the Codex CLI: $BATON_CODEX_BIN, else codex on PATH. The
// test is skipped without it, except under CI=true, where it fails (.ci/run
// installs the CLI).
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

// scriptedResponses is the stand-in for the Responses API Codex streams
// from: a canned reply naming the model it was asked for; a last user
// message holding "FAILTURN" gets a failed response, "AUTHFAIL" a 401,
// "STALL" the start of a response and then nothing until the client goes
// away.
type scriptedResponses struct {
	srv     *httptest.Server
	quit    chan struct{}
	stalled chan struct{}

	mu     sync.Mutex
	models []string
	inputs []int
}

func newScriptedResponses(t *testing.T) *scriptedResponses {
	a := &scriptedResponses{quit: make(chan struct{}), stalled: make(chan struct{}, 1)}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(func() {
		close(a.quit)
		a.srv.Close()
	})
	return a
}

func (a *scriptedResponses) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Model string `json:"model"`
		Input []struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"input"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	last := ""
	for _, in := range req.Input {
		if in.Role == "user" && len(in.Content) > 0 {
			last = in.Content[len(in.Content)-1].Text
		}
	}
	a.mu.Lock()
	a.models = append(a.models, req.Model)
	a.inputs = append(a.inputs, len(req.Input))
	a.mu.Unlock()
	if strings.Contains(last, "AUTHFAIL") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
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
	event("response.created", `{"type":"response.created","response":{"id":"resp_1"}}`)
	switch {
	case strings.Contains(last, "FAILTURN"):
		event("response.failed", `{"type":"response.failed","response":{"id":"resp_1","error":{"code":"server_error","message":"scripted failure"}}}`)
		return
	case strings.Contains(last, "STALL"):
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
	text, _ := json.Marshal("reply from " + req.Model)
	event("response.output_item.done", `{"type":"response.output_item.done","item":{"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":`+string(text)+`}]}}`)
	event("response.completed", `{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":10,"input_tokens_details":null,"output_tokens":5,"output_tokens_details":null,"total_tokens":15}}}`)
}

// TestCodexEndToEnd drives the real Codex CLI through the codex profile
// against the scripted Responses API on 127.0.0.1 (a model provider set
// with -c, retries off): a fresh start reaching ready with its thread id, a
// resume of that thread under another model, a failed turn, refused
// credentials, and a confirmed stop in the middle of a turn.
func TestCodexEndToEnd(t *testing.T) {
	bin := codexBin(t)
	api := newScriptedResponses(t)
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	prof := exec.Codex(exec.CodexOptions{
		Command: bin,
		Config: []string{
			"model_provider=scripted",
			`model_providers.scripted={name="scripted",base_url="` + api.srv.URL + `/v1",wire_api="responses",env_key="OPENAI_API_KEY",stream_max_retries=0,request_max_retries=0}`,
		},
		Reconfigure: true,
	})
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "OPENAI_API_KEY=sk-test"}
	e := newEngine(t, exec.Options{Profile: prof, DataDir: filepath.Join(root, "data"), Env: env})
	ctx := testCtx(t)
	first := baton.EngineConfig{Engine: "codex", Model: "gpt-test-1"}
	other := baton.EngineConfig{Engine: "codex", Model: "gpt-other-2"}

	start := func(req engine.StartRequest) engine.Process {
		t.Helper()
		req.Workspace, req.Session, req.Dir = "ws", "s1", work
		p, err := e.Start(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	turn := func(req engine.StartRequest) string {
		t.Helper()
		p := start(req)
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
		t.Fatalf("native id %q is not a thread UUID", id)
	}
	if !e.CanReconfigure(first, other) {
		t.Fatal("the codex profile with Reconfigure cannot reconfigure")
	}
	if got := turn(engine.StartRequest{Config: other, Mode: engine.Resume, NativeID: id, Prompt: "and now?"}); got != id {
		t.Fatalf("resume under another model answered thread %q; want %q", got, id)
	}
	api.mu.Lock()
	models, inputs := append([]string(nil), api.models...), append([]int(nil), api.inputs...)
	api.mu.Unlock()
	if len(models) != 2 || models[0] != first.Model || models[1] != other.Model || inputs[1] <= inputs[0] {
		t.Errorf("the API saw models %q with %v input items; want %s then %s, the second carrying the first", models, inputs, first.Model, other.Model)
	}
	var replies []string
	for _, ev := range events(t, e, "s1") {
		if ev.Speaker == recap.Agent && ev.Kind == recap.Message {
			replies = append(replies, ev.Text)
		}
	}
	if want := "reply from gpt-test-1|reply from gpt-other-2"; strings.Join(replies, "|") != want {
		t.Errorf("transcript replies = %q; want %q", replies, want)
	}

	for _, tc := range []struct {
		prompt string
		want   []error
	}{
		{"FAILTURN please", []error{engine.ErrReadyRejected}},
		{"AUTHFAIL please", []error{engine.ErrReadyRejected, engine.ErrAuth}},
	} {
		p := start(engine.StartRequest{Config: first, Prompt: tc.prompt})
		_, err := p.Ready(ctx)
		for _, w := range tc.want {
			if !errors.Is(err, w) {
				t.Errorf("%s: Ready error %v is not %v", tc.prompt, err, w)
			}
		}
		waitDone(t, p)
	}

	stall := newLaunchID("codex-stall")
	p := start(engine.StartRequest{Config: first, Mode: engine.Resume, NativeID: id, Prompt: "STALL please", LaunchID: stall})
	select {
	case <-api.stalled:
	case <-ctx.Done():
		t.Fatalf("the CLI never reached the API (exit %+v)", p.Exit())
	}
	if o, err := p.Stop(ctx); o != engine.Stopped || err != nil {
		t.Fatalf("Stop mid-turn = %s, %v; want stopped", o, err)
	}
	if _, err := p.Ready(ctx); !errors.Is(err, engine.ErrExitedBeforeReady) {
		t.Errorf("Ready after a stop mid-turn = %v; want ErrExitedBeforeReady", err)
	}
	if o, err := e.ReapLaunch(ctx, stall); o != engine.NotRunning || err != nil {
		t.Errorf("after the stop, ReapLaunch = %s, %v; want not-running", o, err)
	}
}
