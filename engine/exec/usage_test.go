//go:build linux

package exec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// usageScript is the scripted API the usage samples were recorded
// against (testdata/*/usage-tools*): a prompt holding "LOOP" gets two
// rounds of a tool call (of a tool no CLI has, so each answers with an
// error result) and then a text reply, each request reporting its own
// usage; the context after the turn is the last request's input. A
// prompt holding "MORE" gets a text reply with a larger context.
func usageScript(r clitest.Request) clitest.Reply {
	n := int64(len(r.Results()))
	if strings.Contains(r.LastUser(), "MORE") {
		return clitest.Reply{Text: "more", Usage: &clitest.Usage{Input: 11, CacheRead: 40000, Output: 9}}
	}
	if strings.Contains(r.LastUser(), "LOOP") && n < 2 {
		return clitest.Reply{Calls: []clitest.Call{{Name: "NoSuchTool", Input: map[string]string{"a": "b"}}},
			Usage: &clitest.Usage{Input: 100 + n, CacheCreation: 2000, CacheRead: 30000 + n*1000, Output: 40}}
	}
	return clitest.Reply{Text: "done", Usage: &clitest.Usage{Input: 7, CacheCreation: 500, CacheRead: 33000, Output: 60}}
}

// The usage the samples of usageScript's turn report: Claude Code counts
// the last request's input, cache creation and cache read (7+500+33000)
// and names the window in its result line; Codex's rollout file counts
// the last request's input with its cached part (7+33000) and its
// window (the fallback metadata of an unknown model).
var (
	claudeLoopUsage = engine.Usage{Tokens: 33507, Window: 200000}
	codexLoopUsage  = engine.Usage{Tokens: 33007, Window: 258400}
)

// replayExit replays a testdata file through prof with the stand-in agent
// (env added to its environment) and returns how the launch ended.
func replayExit(t *testing.T, prof exec.Profile, req engine.StartRequest, stdout string, env ...string) engine.ExitStatus {
	t.Helper()
	dir := t.TempDir()
	prof.Command = bins["agent"]
	env = append([]string{"PATH=" + os.Getenv("PATH"), "AGENT_REPLAY=" + stdout, "AGENT_ARGV=" + filepath.Join(dir, "argv.json")}, env...)
	e := newEngine(t, exec.Options{Profile: prof, DataDir: filepath.Join(dir, "data"), Env: env})
	req.Workspace, req.Session = "ws", "s1"
	p, err := e.Start(testCtx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return waitDone(t, p)
}

// codexHome writes the rollout file of thread, with the lines of the
// testdata file rollout, under home (a CODEX_HOME; a fresh one when "")
// and returns home.
func codexHome(t *testing.T, home, thread, rollout string) string {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	b, err := os.ReadFile(rollout)
	if err != nil {
		t.Fatal(err)
	}
	dir := clitest.Dir(t, home, "sessions", "2026", "12", "03")
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-12-03T07-56-15-"+thread+".jsonl"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// TestUsageSamples reads the usage of the real CLIs' output samples: the
// last request's context, not the turn's sum (result.usage,
// turn.completed.usage), with the window each reports; a profile that
// reads none, or output without usage, leaves it zero; a window the
// output does not name comes from Profile.Windows.
func TestUsageSamples(t *testing.T) {
	const thread = "01a23ae7-706e-7100-a7c3-4c7a9541a2e0"
	claude := exec.Claude(exec.ClaudeOptions{})
	codex := exec.Codex(exec.CodexOptions{})
	cfg := baton.EngineConfig{Model: "gpt-test-1"}
	noWindow := filepath.Join(t.TempDir(), "rollout.jsonl")
	b, err := os.ReadFile("testdata/codex/usage-tools.rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(noWindow, []byte(strings.ReplaceAll(string(b), `"model_context_window":258400`, `"model_context_window":null`)), 0o600); err != nil {
		t.Fatal(err)
	}
	// A subagent's message (it names the tool call that runs it) is not
	// the session's context.
	sub := filepath.Join(t.TempDir(), "subagent.jsonl")
	b, err = os.ReadFile("testdata/claude/usage-tools.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(b)), "\n")
	subLine := `{"type":"assistant","message":{"id":"msg_9","model":"claude-test-1","content":[{"type":"text","text":"sub"}],"usage":{"input_tokens":5,"cache_read_input_tokens":150000,"output_tokens":1}},"parent_tool_use_id":"toolu_4_0","session_id":"x"}` + "\n"
	lines = append(lines[:len(lines)-1], subLine, lines[len(lines)-1])
	if err := os.WriteFile(sub, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	windows := codex
	windows.Windows = map[string]int64{"gpt-test-1": 128000, "": 1}
	noMeter := claude
	noMeter.Output.Usage = nil
	for _, tc := range []struct {
		name   string
		prof   exec.Profile
		stdout string
		env    []string
		want   engine.Usage
	}{
		{"claude tool loop", claude, "testdata/claude/usage-tools.jsonl", nil, claudeLoopUsage},
		{"claude subagent", claude, sub, nil, claudeLoopUsage},
		{"claude one request", claude, "testdata/claude/fresh.jsonl", nil, engine.Usage{Tokens: 10, Window: 200000}},
		{"claude without a meter", noMeter, "testdata/claude/usage-tools.jsonl", nil, engine.Usage{}},
		{"claude refused", claude, "testdata/claude/missing.jsonl", nil, engine.Usage{}},
		{"codex tool loop", codex, "testdata/codex/usage-tools.jsonl", []string{"CODEX_HOME=" + codexHome(t, "", thread, "testdata/codex/usage-tools.rollout.jsonl")}, codexLoopUsage},
		{"codex under HOME", codex, "testdata/codex/usage-tools.jsonl", []string{"HOME=" + filepath.Dir(codexHome(t, filepath.Join(t.TempDir(), ".codex"), thread, "testdata/codex/usage-tools.rollout.jsonl"))}, codexLoopUsage},
		{"codex without its session file", codex, "testdata/codex/usage-tools.jsonl", []string{"CODEX_HOME=" + t.TempDir()}, engine.Usage{}},
		{"codex window from the profile", windows, "testdata/codex/usage-tools.jsonl", []string{"CODEX_HOME=" + codexHome(t, "", thread, noWindow)}, engine.Usage{Tokens: 33007, Window: 128000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := replayExit(t, tc.prof, engine.StartRequest{Config: cfg, Prompt: "LOOP please"}, tc.stdout, tc.env...)
			if got.Usage != tc.want {
				t.Errorf("Exit().Usage = %+v; want %+v", got.Usage, tc.want)
			}
		})
	}
}
