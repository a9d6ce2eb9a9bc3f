//go:build linux

package exec_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// newScriptedResponses is the stand-in for the Responses API Codex
// streams from: a reply naming the model it was asked for; a last user
// message holding "FAILTURN" gets a failed response, "AUTHFAIL" a 401,
// "STALL" the start of a response and then nothing until the CLI goes
// away.
func newScriptedResponses(t *testing.T) (*clitest.API, *clitest.Gate) {
	stall := clitest.NewGate()
	api := clitest.NewResponses(t, func(r clitest.Request) clitest.Reply {
		switch last := r.LastUser(); {
		case strings.Contains(last, "AUTHFAIL"):
			return clitest.Fail(http.StatusUnauthorized, "Incorrect API key provided")
		case strings.Contains(last, "FAILTURN"):
			return clitest.Reply{Error: "scripted failure"}
		case strings.Contains(last, "STALL"):
			return clitest.Reply{Wait: stall}
		}
		return clitest.Text("reply from " + r.Model)
	})
	return api, stall
}

// TestCodexEndToEnd drives the real Codex CLI through the codex profile
// against the scripted Responses API on 127.0.0.1 (a model provider set
// with -c, retries off): a fresh start reaching ready with its thread id, a
// resume of that thread under another model, a failed turn, refused
// credentials, and a confirmed stop in the middle of a turn.
func TestCodexEndToEnd(t *testing.T) {
	bin := clitest.CodexBin(t)
	api, stall := newScriptedResponses(t)
	prof := exec.Codex(exec.CodexOptions{Command: bin, Config: api.CodexConfig(), Reconfigure: true})
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
	reqs := api.Requests()
	if len(reqs) != 2 || reqs[0].Model != first.Model || reqs[1].Model != other.Model || len(reqs[1].Messages) <= len(reqs[0].Messages) {
		t.Errorf("the API saw %d requests (%+v); want %s then %s, the second carrying the first", len(reqs), reqs, first.Model, other.Model)
	}
	// codex exec --json names neither the model nor its version: the
	// process reports nothing, and the record keeps the configured model.
	q := start(engine.StartRequest{Config: first, Mode: engine.Resume, NativeID: id, Prompt: "once more"})
	if _, err := q.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	waitDone(t, q)
	if got := q.Actual(); got != (engine.Actual{}) {
		t.Errorf("the Codex CLI now says what runs (%+v): read it in the profile (Output.Model, Output.Version)", got)
	}
	replies := agentReplies(t, e, "s1")
	if want := "reply from gpt-test-1|reply from gpt-other-2|reply from gpt-test-1"; strings.Join(replies, "|") != want {
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

	launch := newLaunchID("codex-stall")
	p := start(engine.StartRequest{Config: first, Mode: engine.Resume, NativeID: id, Prompt: "STALL please", LaunchID: launch})
	stopMidTurn(t, ctx, e, p, stall.Held(), launch)
}
