package clitest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// A scripted Messages API answers each request with its Script's Reply;
// here a client of our own asks it, as Claude Code does.
func ExampleStartMessages() {
	api := clitest.StartMessages(func(r clitest.Request) clitest.Reply {
		if name, ok := r.Tool("submit_session_handoff"); ok {
			return clitest.Calls(clitest.Call{Name: name, Input: map[string]string{"report": "Done."}})
		}
		return clitest.Text("You said: " + r.LastUser())
	})
	defer api.Close()

	res, err := http.Post(api.URL+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-test","stream":true,"messages":[{"role":"user","content":"hello"}]}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(strings.Contains(string(body), `"text":"You said: hello"`))
	fmt.Println(api.Requests()[0].Model)
	// Output:
	// true
	// claude-test
}

// A test that drives the real Claude Code CLI through the exec engine,
// isolated in a fresh home and talking to the scripted API only: it is
// skipped without the CLI, and fails under CI=true.
func ExampleNewMessages() {
	var t *testing.T // the test's
	bin := clitest.ClaudeBin(t)
	api := clitest.NewMessages(t, func(clitest.Request) clitest.Reply { return clitest.Text("Hello.") })
	e := clitest.NewEngine(t, exec.Options{
		Profile: exec.Claude(exec.ClaudeOptions{Command: bin}),
		DataDir: t.TempDir(),
		Env:     api.ClaudeEnv(clitest.Home(t)),
	})
	ctx := clitest.Ctx(t, time.Minute)
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Dir: t.TempDir(), Prompt: "say hello"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if got := api.Streamed()[0].LastUser(); got != "say hello" {
		t.Errorf("the model was asked %q", got)
	}
}

// Codex takes its API as a model provider in its configuration.
func ExampleNewResponses() {
	var t *testing.T // the test's
	bin := clitest.CodexBin(t)
	api := clitest.NewResponses(t, func(clitest.Request) clitest.Reply { return clitest.Text("Hello.") })
	_ = clitest.NewEngine(t, exec.Options{
		Profile: exec.Codex(exec.CodexOptions{Command: bin, Config: api.CodexConfig()}),
		DataDir: t.TempDir(),
		Env:     clitest.CodexEnv(clitest.Home(t)),
	})
}
