//go:build linux

package exec_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/internal/clitest"
)

// scriptedResponses is the stand-in for the Responses API Codex streams
// from: a canned reply naming the model it was asked for; a last user
// message holding "FAILTURN" gets a failed response, "AUTHFAIL" a 401,
// "STALL" the start of a response and then nothing until the client goes
// away.
type scriptedResponses struct {
	srv   *httptest.Server
	stall *clitest.Stall

	mu     sync.Mutex
	models []string
	inputs []int
}

func newScriptedResponses(t *testing.T) *scriptedResponses {
	a := &scriptedResponses{stall: clitest.NewStall(t)}
	a.srv = clitest.API(t, "/v1/responses", http.StatusNotFound, a.serve)
	return a
}

func (a *scriptedResponses) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Input []struct {
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"input"`
	}
	if !clitest.DecodeJSON(w, r, &req) {
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
	event := clitest.SSE(w)
	clitest.ResponseCreated(event)
	switch {
	case strings.Contains(last, "FAILTURN"):
		event("response.failed", `{"type":"response.failed","response":{"id":"resp_1","error":{"code":"server_error","message":"scripted failure"}}}`)
		return
	case strings.Contains(last, "STALL"):
		a.stall.Hold(r)
		return
	}
	clitest.ResponseText(event, "reply from "+req.Model)
}

// TestCodexEndToEnd drives the real Codex CLI through the codex profile
// against the scripted Responses API on 127.0.0.1 (a model provider set
// with -c, retries off): a fresh start reaching ready with its thread id, a
// resume of that thread under another model, a failed turn, refused
// credentials, and a confirmed stop in the middle of a turn.
func TestCodexEndToEnd(t *testing.T) {
	bin := clitest.CodexBin(t)
	api := newScriptedResponses(t)
	prof := exec.Codex(exec.CodexOptions{Command: bin, Config: clitest.CodexProvider(api.srv.URL), Reconfigure: true})
	e, work := cliEngine(t, prof, clitest.CodexEnv)
	ctx := testCtx(t)
	first := baton.EngineConfig{Engine: "codex", Model: "gpt-test-1"}
	other := baton.EngineConfig{Engine: "codex", Model: "gpt-other-2"}

	start := func(req engine.StartRequest) engine.Process {
		t.Helper()
		return cliStart(t, ctx, e, work, req)
	}
	turn := func(req engine.StartRequest) string {
		t.Helper()
		return cliTurn(t, ctx, e, work, req)
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
	replies := agentReplies(t, e, "s1")
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
	stopMidTurn(t, ctx, e, p, api.stall.Held, stall)
}
