//go:build linux

package acp_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// TestCodexAdapter drives Codex through its ACP adapter (its Linux x64
// binary) against the scripted Responses API: a fresh session and a resume
// by session/load that sends the model the conversation so far.
func TestCodexAdapter(t *testing.T) {
	bin := clitest.Bin(t, envCodexAdapter, "codex-acp", "npm install "+codexAdapter)
	api := clitest.NewResponses(t, func(r clitest.Request) clitest.Reply {
		last := r.LastUser()
		return clitest.Text("reply to " + last[strings.LastIndexByte(last, '\n')+1:])
	})
	root := t.TempDir()
	home := clitest.Dir(t, root, "home")
	var args []string
	for _, kv := range clitest.CodexConfig(api.URL) {
		args = append(args, "-c", kv)
	}
	e := newEngine(t, acp.Options{Command: bin, Args: args, Env: clitest.CodexEnv(home), DataDir: clitest.Dir(t, root, "data"), StopGrace: 5 * time.Second})
	work := clitest.Dir(t, root, "work")
	ctx := clitest.Ctx(t, 4*time.Minute)
	cfg := baton.EngineConfig{Engine: "codex-acp"}

	id := turn(t, ctx, e, engine.StartRequest{Config: cfg, Dir: work, Mode: engine.Fresh, Prompt: "say hello"})
	if got := turn(t, ctx, e, engine.StartRequest{Config: cfg, Dir: work, Mode: engine.Resume, NativeID: id, Prompt: "again"}); got != id {
		t.Fatalf("resume's session id = %q; want %q", got, id)
	}
	if got := strings.Join(replies(t, e, "s1"), ""); got != "reply to say helloreply to again" {
		t.Errorf("agent messages = %q", got)
	}
	reqs := api.Streamed()
	var seen []string
	for _, m := range reqs[len(reqs)-1].Messages {
		seen = append(seen, m.Text)
	}
	if s := strings.Join(seen, "|"); !strings.Contains(s, "reply to say hello") {
		t.Errorf("the resumed turn's request did not carry the conversation: %q", s)
	}
}

// TestPinnedAdapters: .ci/run installs the adapter versions these tests
// are verified with.
func TestPinnedAdapters(t *testing.T) {
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{claudeAdapter, codexAdapter} {
		if !strings.Contains(string(b), `"`+pkg+`"`) {
			t.Errorf(".ci/run does not install %s", pkg)
		}
	}
}
