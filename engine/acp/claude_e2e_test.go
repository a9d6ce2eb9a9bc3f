//go:build linux

package acp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// The adapters the end-to-end tests run, and the variables that name them
// (.ci/run installs these versions; TestPinnedAdapters keeps them equal).
const (
	claudeAdapter    = "@zed-industries/claude-agent-acp@0.23.1"
	codexAdapter     = "@zed-industries/codex-acp@0.16.0"
	envClaudeAdapter = "BATON_ACP_CLAUDE_BIN"
	envCodexAdapter  = "BATON_ACP_CODEX_BIN"
)

func claudeAdapterBin(t *testing.T) string {
	t.Helper()
	return clitest.Bin(t, envClaudeAdapter, "claude-agent-acp", "npm install "+claudeAdapter)
}

// claudeScript answers as a model would: "HANG" calls Glob, and the
// request with its result is held on hang; anything else gets a reply
// naming the last user message.
func claudeScript(hang *clitest.Gate) clitest.Script {
	return func(r clitest.Request) clitest.Reply {
		last := r.LastUser()
		// Claude Code puts its reminders before the prompt.
		last = last[strings.LastIndexByte(last, '\n')+1:]
		if !r.Stream {
			return clitest.Text("ok")
		}
		if len(r.Results()) > 0 && hang != nil {
			return clitest.Reply{Wait: hang, Text: "never"}
		}
		if strings.Contains(last, "HANG") {
			glob, _ := r.Tool("Glob")
			return clitest.Calls(clitest.Call{Name: glob, Input: map[string]string{"pattern": "*.nothing"}})
		}
		return clitest.Text("reply to " + last)
	}
}

// claudeEngine is an ACP engine on the Claude Code adapter, talking to api
// from an isolated home.
func claudeEngine(t *testing.T, api *clitest.API, opts acp.Options) (*acp.Engine, string) {
	t.Helper()
	root := t.TempDir()
	opts.Command = claudeAdapterBin(t)
	opts.Env = api.ClaudeEnv(clitest.Dir(t, root, "home"))
	opts.DataDir = clitest.Dir(t, root, "data")
	if opts.StopGrace == 0 {
		opts.StopGrace = 5 * time.Second
	}
	return newEngine(t, opts), clitest.Dir(t, root, "work")
}

// TestClaudeAdapter drives Claude Code through its ACP adapter against the
// scripted Messages API: a fresh session, a resume by session/load that
// sends the model the conversation so far, and a confirmed stop in the
// middle of a turn.
func TestClaudeAdapter(t *testing.T) {
	hang := clitest.NewGate()
	api := clitest.NewMessages(t, claudeScript(hang))
	e, work := claudeEngine(t, api, acp.Options{})
	ctx := clitest.Ctx(t, 4*time.Minute)
	cfg := baton.EngineConfig{Engine: "claude-acp"}

	id := turn(t, ctx, e, engine.StartRequest{Config: cfg, Dir: work, Mode: engine.Fresh, Prompt: "say hello"})
	if got := turn(t, ctx, e, engine.StartRequest{Config: cfg, Dir: work, Mode: engine.Resume, NativeID: id, Prompt: "again"}); got != id {
		t.Fatalf("resume's session id = %q; want %q", got, id)
	}
	got := replies(t, e, "s1")
	if strings.Join(got, "") != "reply to say helloreply to again" {
		t.Errorf("agent messages = %q", got)
	}
	reqs := api.Streamed()
	last := reqs[len(reqs)-1]
	var seen []string
	for _, m := range last.Messages {
		seen = append(seen, m.Text)
	}
	if s := strings.Join(seen, "|"); !strings.Contains(s, "say hello") || !strings.Contains(s, "reply to say hello") {
		t.Errorf("the resumed turn's request did not carry the conversation: %q", s)
	}

	launch := newLaunchID("claude-stop")
	p := start(t, ctx, e, engine.StartRequest{Config: cfg, Dir: work, Mode: engine.Resume, NativeID: id, Prompt: "HANG", LaunchID: launch})
	if _, err := p.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	select {
	case <-hang.Held():
	case <-ctx.Done():
		t.Fatal("the turn never reached its held request")
	}
	t0 := time.Now()
	if o, err := p.Stop(ctx); o != engine.Stopped || err != nil {
		t.Fatalf("Stop mid-turn = %s, %v", o, err)
	}
	t.Logf("confirmed stop mid-turn in %s (exit %+v)", time.Since(t0), p.Exit())
	if o, err := e.ReapLaunch(ctx, launch); o != engine.NotRunning || err != nil {
		t.Errorf("after the stop, ReapLaunch = %s, %v", o, err)
	}
}
