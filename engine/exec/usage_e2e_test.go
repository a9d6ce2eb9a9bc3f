//go:build linux

package exec_test

import (
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// usageTurns runs two turns of the installed CLI against usageScript
// through prof: a fresh turn with a tool loop, whose usage must be the
// one read from the samples (want, the CLI's output checked against
// testdata/*/usage-tools*), then a resume whose one request reports a
// larger context.
func usageTurns(t *testing.T, prof exec.Profile, env func(string) []string, cfg baton.EngineConfig, want engine.Usage) {
	t.Helper()
	e, work := cliEngine(t, prof, env)
	ctx := testCtx(t)
	turn := func(req engine.StartRequest) (string, engine.ExitStatus) {
		t.Helper()
		req.Config = cfg
		p := cliStart(t, ctx, e, work, req)
		id, err := p.Ready(ctx)
		if err != nil {
			t.Fatalf("Ready: %v (exit %+v)", err, waitDone(t, p))
		}
		x := waitDone(t, p)
		if !x.Clean() {
			t.Fatalf("Exit = %+v", x)
		}
		return id, x
	}
	id, x := turn(engine.StartRequest{Prompt: "LOOP please"})
	if x.Usage != want {
		t.Errorf("tool loop: Exit().Usage = %+v; want %+v (the samples')", x.Usage, want)
	}
	_, x = turn(engine.StartRequest{Mode: engine.Resume, NativeID: id, Prompt: "MORE please"})
	if want := (engine.Usage{Tokens: 40011, Window: want.Window}); x.Usage != want {
		t.Errorf("resume: Exit().Usage = %+v; want %+v", x.Usage, want)
	}
}

// TestClaudeUsageEndToEnd: the real Claude Code CLI's output gives the
// context of the last request of a tool loop and the window.
func TestClaudeUsageEndToEnd(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api := clitest.NewMessages(t, usageScript)
	usageTurns(t, exec.Claude(exec.ClaudeOptions{Command: bin}), api.ClaudeEnv, baton.EngineConfig{Engine: "claude", Model: "claude-test-1"}, claudeLoopUsage)
}

// TestCodexUsageEndToEnd: the real Codex CLI's session file gives the
// context of the last request of a tool loop and the window (its
// --json output gives only the turn's sum).
func TestCodexUsageEndToEnd(t *testing.T) {
	bin := clitest.CodexBin(t)
	api := clitest.NewResponses(t, usageScript)
	prof := exec.Codex(exec.CodexOptions{Command: bin, Config: api.CodexConfig()})
	usageTurns(t, prof, clitest.CodexEnv, baton.EngineConfig{Engine: "codex", Model: "gpt-test-1"}, codexLoopUsage)
}
