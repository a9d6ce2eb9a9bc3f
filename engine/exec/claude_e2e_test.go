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
	"time"

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
}

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
	a.requests = append(a.requests, apiRequest{Model: req.Model, Messages: len(req.Messages), Stream: req.Stream})
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
	if last := req.Messages[len(req.Messages)-1]; strings.Contains(string(last), "STALL") {
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
