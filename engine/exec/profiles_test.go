//go:build linux

package exec_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/transcript"
)

// replayCase runs a profile with the stand-in agent in replay mode: it
// records the arguments it was given and prints a sample of the real CLI's
// output.
type replayCase struct {
	name      string
	req       engine.StartRequest
	stdout    string // testdata file replayed on standard output
	stderr    string // testdata file replayed on standard error
	exit      string
	wantArgs  []string // "<file:NAME>" stands for a launch file's path
	wantFiles map[string]string
	wantID    string
	wantErr   []error
	wantText  string // an agent message the transcript must hold
	// wantActual is what the process must report it runs once ready.
	wantActual engine.Actual
}

func runReplay(t *testing.T, prof exec.Profile, tc replayCase) {
	t.Helper()
	ctx := testCtx(t)
	dir := t.TempDir()
	argvFile := filepath.Join(dir, "argv.json")
	env := []string{"PATH=" + os.Getenv("PATH"), "AGENT_REPLAY=" + tc.stdout, "AGENT_ARGV=" + argvFile, "AGENT_REPLAY_EXIT=" + tc.exit}
	if tc.stderr != "" {
		env = append(env, "AGENT_REPLAY_STDERR="+tc.stderr)
	}
	prof.Command = bins["agent"]
	e := newEngine(t, exec.Options{Profile: prof, DataDir: filepath.Join(dir, "data"), Env: env})
	req := tc.req
	req.Session, req.LaunchID = "s1", newLaunchID("L")
	p, err := e.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	id, err := p.Ready(ctx)
	if len(tc.wantErr) == 0 && (err != nil || id != tc.wantID) {
		t.Errorf("Ready = %q, %v; want %q", id, err, tc.wantID)
	}
	if got := p.Actual(); got != tc.wantActual {
		t.Errorf("Actual = %+v; want %+v", got, tc.wantActual)
	}
	for _, w := range tc.wantErr {
		if !errors.Is(err, w) {
			t.Errorf("Ready error %v is not %v", err, w)
		}
	}
	waitDone(t, p)
	if left, _ := filepath.Glob(filepath.Join(dir, "data", "launches", "*")); len(left) > 0 {
		t.Errorf("launch files left after the launch: %v", left)
	}
	var rec struct {
		Args  []string          `json:"args"`
		Files map[string]string `json:"files"`
	}
	b, err := os.ReadFile(argvFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for i, a := range rec.Args {
		if body, ok := rec.Files[a]; ok && strings.Contains(a, string(filepath.Separator)+"launch-") {
			rec.Args[i] = "<file:" + filepath.Base(a) + ">"
			files[filepath.Base(a)] = body
		}
	}
	if d := cmp.Diff(tc.wantArgs, rec.Args); d != "" {
		t.Errorf("argv (-want +got):\n%s", d)
	}
	if d := cmp.Diff(tc.wantFiles, files, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("launch files (-want +got):\n%s", d)
	}
	if tc.wantText != "" {
		found := false
		for _, ev := range events(t, e, "s1") {
			if ev.Speaker == transcript.Agent && ev.Kind == transcript.Message && ev.Text == tc.wantText {
				found = true
			}
		}
		if !found {
			t.Errorf("the transcript has no agent message %q", tc.wantText)
		}
	}
}

func TestClaudeProfile(t *testing.T) {
	const sid = "92fecc85-b97f-4daa-b84c-ebc3a8dfdea7"
	prof := exec.Claude(exec.ClaudeOptions{})
	prof.LaunchExtra = reportMCP("http://127.0.0.1:1/mcp")
	head := []string{"-p", "--output-format", "stream-json", "--verbose"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []replayCase{
		{
			name:     "fresh",
			req:      engine.StartRequest{Prompt: "-fix the bug", Config: baton.EngineConfig{Engine: "claude", Model: "claude-test-1", ReasoningEffort: "high", PermissionMode: "acceptEdits"}},
			stdout:   "testdata/claude/fresh.jsonl",
			wantArgs: cat(head, []string{"--model", "claude-test-1", "--effort", "high", "--permission-mode", "acceptEdits", "--", "-fix the bug"}),
			wantID:   sid, wantText: "Hello from the scripted API",
			wantActual: engine.Actual{Model: "claude-test-1", Version: "2.1.197"},
		},
		{
			name: "resume report-only under another model",
			req: engine.StartRequest{Prompt: "report", Mode: engine.Resume, NativeID: sid, Turn: transcript.ReportOnly,
				Config: baton.EngineConfig{Engine: "claude", Model: "claude-other-2", PermissionMode: "bypassPermissions"},
				Report: &engine.ReportCredentials{Handoff: "h1", Attempt: 2, Token: baton.ParseToken(`tok"en`)}},
			stdout: "testdata/claude/resume.jsonl",
			wantArgs: cat(head, []string{"--resume", sid, "--model", "claude-other-2",
				"--tools", "Read,Grep,Glob", "--allowedTools", "Read,Grep,Glob",
				"--mcp-config", "<file:mcp.json>", "--strict-mcp-config", "--allowedTools", "mcp__baton__submit_session_handoff", "--", "report"}),
			wantFiles:  map[string]string{"mcp.json": `{"mcpServers":{"baton":{"headers":{"X-Baton-Handoff":"h1","X-Baton-Token":"tok\"en"},"type":"http","url":"http://127.0.0.1:1/mcp"}}}`},
			wantID:     sid,
			wantActual: engine.Actual{Model: "claude-other-2", Version: "2.1.197"},
		},
		{
			name:     "resume of a missing session",
			req:      engine.StartRequest{Prompt: "x", Mode: engine.Resume, NativeID: "0199a213-81c0-7800-8aa1-bbab2a035a53"},
			stdout:   "testdata/claude/missing.jsonl",
			stderr:   "testdata/claude/missing.jsonl",
			exit:     "1",
			wantArgs: cat(head, []string{"--resume", "0199a213-81c0-7800-8aa1-bbab2a035a53", "--", "x"}),
			wantErr:  []error{engine.ErrReadyRejected, engine.ErrSessionMissing},
			// No init line: the CLI says nothing of what it runs.
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runReplay(t, prof, tc) })
	}
}

func TestCodexProfile(t *testing.T) {
	prof := exec.Codex(exec.CodexOptions{
		Config:       []string{"model_provider=mock"},
		ReportConfig: []string{`mcp_servers.baton.url="http://127.0.0.1:1/mcp"`},
	})
	const thread = "01a22d67-bc63-7e01-9018-b2033f3f9132"
	tests := []replayCase{
		{
			name:     "fresh",
			req:      engine.StartRequest{Prompt: "list files", Config: baton.EngineConfig{Engine: "codex", Model: "gpt-test", ReasoningEffort: "high", PermissionMode: "workspace-write"}},
			stdout:   "testdata/codex/fresh.jsonl",
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "-m", "gpt-test", "-c", "model_reasoning_effort=high", "-c", "sandbox_mode=workspace-write", "--", "list files"},
			wantID:   "01a22d67-bc63-7e01-9018-b2033f3f9132", wantText: "Hello from the scripted Responses API",
		},
		{
			name:     "resume under another model",
			req:      engine.StartRequest{Prompt: "again", Mode: engine.Resume, NativeID: thread, Config: baton.EngineConfig{Engine: "codex", Model: "gpt-other"}},
			stdout:   "testdata/codex/resume-other-model.jsonl",
			wantArgs: []string{"exec", "resume", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "-m", "gpt-other", "--", thread, "again"},
			wantID:   thread, wantText: "Hello from the scripted Responses API",
		},
		{
			name:     "error items and retries are not readiness",
			req:      engine.StartRequest{Prompt: "say hi"},
			stdout:   "testdata/codex/fresh-offline.jsonl",
			exit:     "1",
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "--", "say hi"},
			wantErr:  []error{engine.ErrExitedBeforeReady},
		},
		{
			name:     "failed turn",
			req:      engine.StartRequest{Prompt: "FAILTURN now"},
			stdout:   "testdata/codex/failed.jsonl",
			exit:     "1",
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "--", "FAILTURN now"},
			wantErr:  []error{engine.ErrReadyRejected},
		},
		{
			name:     "refused credentials",
			req:      engine.StartRequest{Prompt: "AUTHFAIL now"},
			stdout:   "testdata/codex/auth.jsonl",
			exit:     "1",
			wantArgs: []string{"exec", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "--", "AUTHFAIL now"},
			wantErr:  []error{engine.ErrReadyRejected, engine.ErrAuth},
		},
		{
			name:   "resume report-only",
			req:    engine.StartRequest{Prompt: "report", Mode: engine.Resume, NativeID: "01a22d54-df57-7b12-9507-0cf52c1d2aad", Turn: transcript.ReportOnly, Config: baton.EngineConfig{Engine: "codex", PermissionMode: "danger-full-access"}},
			stdout: "testdata/codex/resume-offline.jsonl",
			exit:   "1",
			wantArgs: []string{"exec", "resume", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "-c", "sandbox_mode=read-only",
				"-c", `mcp_servers.baton.url="http://127.0.0.1:1/mcp"`, "--", "01a22d54-df57-7b12-9507-0cf52c1d2aad", "report"},
			wantErr: []error{engine.ErrExitedBeforeReady},
		},
		{
			name:     "resume of a missing thread",
			req:      engine.StartRequest{Prompt: "again", Mode: engine.Resume, NativeID: "0199a213-81c0-7800-8aa1-bbab2a035a53"},
			stdout:   "/dev/null",
			stderr:   "testdata/codex/missing.stderr",
			exit:     "1",
			wantArgs: []string{"exec", "resume", "--json", "--skip-git-repo-check", "-c", "model_provider=mock", "--", "0199a213-81c0-7800-8aa1-bbab2a035a53", "again"},
			wantErr:  []error{engine.ErrExitedBeforeReady, engine.ErrSessionMissing},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { runReplay(t, prof, tc) })
	}
}

func TestProfileValidate(t *testing.T) {
	tests := []struct {
		prof exec.Profile
		cfg  baton.EngineConfig
		ok   bool
	}{
		{exec.Claude(exec.ClaudeOptions{}), baton.EngineConfig{Engine: "claude", Model: "any-model", ReasoningEffort: "max", PermissionMode: "plan"}, true},
		{exec.Claude(exec.ClaudeOptions{}), baton.EngineConfig{Engine: "claude", ReasoningEffort: "extreme"}, false},
		{exec.Claude(exec.ClaudeOptions{}), baton.EngineConfig{Engine: "claude", PermissionMode: "yolo"}, false},
		{exec.Codex(exec.CodexOptions{}), baton.EngineConfig{Engine: "codex", PermissionMode: "read-only", ReasoningEffort: "minimal"}, true},
		{exec.Codex(exec.CodexOptions{}), baton.EngineConfig{Engine: "codex", PermissionMode: "acceptEdits"}, false},
	}
	for _, tc := range tests {
		e, err := exec.New(exec.Options{Profile: tc.prof, DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		err = e.Validate(tc.cfg)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, engine.ErrUnsupportedConfig)) {
			t.Errorf("%s.Validate(%+v) = %v; want ok=%v", tc.prof.Name, tc.cfg, err, tc.ok)
		}
	}
}

// TestLaunchExtra: a profile's LaunchExtra adds files and flags to the
// launches it chooses (here Claude's ordinary turns, with an MCP
// configuration), after the configuration flags.
func TestLaunchExtra(t *testing.T) {
	const sid = "92fecc85-b97f-4daa-b84c-ebc3a8dfdea7"
	prof := exec.Claude(exec.ClaudeOptions{})
	prof.LaunchExtra = func(ctx context.Context, req engine.StartRequest) (exec.Extra, error) {
		if req.Turn == transcript.ReportOnly {
			return exec.Extra{}, nil
		}
		return exec.Extra{
			Files: map[string][]byte{"mcp.json": []byte(`{"mcpServers":{"baton":{"type":"http","url":"http://127.0.0.1:1/` + string(req.Session) + `"}}}`)},
			Flags: []string{"--mcp-config", "{file:mcp.json}", "--allowedTools", "mcp__baton__read_source_history"},
		}, nil
	}
	for _, tc := range []replayCase{
		{
			name: "ordinary turn",
			req:  engine.StartRequest{Prompt: "go on", Config: baton.EngineConfig{Model: "m1"}},
			wantArgs: []string{"-p", "--output-format", "stream-json", "--verbose", "--model", "m1",
				"--mcp-config", "<file:mcp.json>", "--allowedTools", "mcp__baton__read_source_history", "--", "go on"},
			wantFiles: map[string]string{"mcp.json": `{"mcpServers":{"baton":{"type":"http","url":"http://127.0.0.1:1/s1"}}}`},
		},
		{
			name: "report-only turn",
			req: engine.StartRequest{Prompt: "report", Mode: engine.Resume, NativeID: sid, Turn: transcript.ReportOnly,
				Report: &engine.ReportCredentials{Handoff: "h7", Attempt: 1, Token: baton.ParseToken("secret-token")}},
			wantArgs: []string{"-p", "--output-format", "stream-json", "--verbose", "--resume", sid,
				"--tools", "Read,Grep,Glob", "--allowedTools", "Read,Grep,Glob", "--", "report"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.stdout, tc.wantID = "testdata/claude/resume.jsonl", sid
			tc.wantActual = engine.Actual{Model: "claude-other-2", Version: "2.1.197"}
			runReplay(t, prof, tc)
		})
	}
}

// TestLaunchExtraError: an error of LaunchExtra fails Start with it, and
// nothing runs.
func TestLaunchExtraError(t *testing.T) {
	boom := baton.NewError(baton.ErrUnavailable, "no grant")
	prof := agentProfile()
	prof.LaunchExtra = func(context.Context, engine.StartRequest) (exec.Extra, error) { return exec.Extra{}, boom }
	e := newEngine(t, exec.Options{Profile: prof})
	if p, err := e.Start(testCtx(t), engine.StartRequest{Workspace: "ws", Session: "s1", Prompt: "hi"}); !errors.Is(err, boom) || p != nil {
		t.Fatalf("Start = %v, %v; want the LaunchExtra error", p, err)
	}
}

// TestLaunchExtraEnv: Extra.Env reaches the child's environment (and
// cannot replace the launch marker); Extra.Flags are expanded.
func TestLaunchExtraEnv(t *testing.T) {
	prof := exec.Profile{
		Name:    "sh",
		Command: "sh",
		Fresh:   []string{"-c", `echo "session $1 ready $X_SECRET $2 $BATON_LAUNCH_ID"`, "sh", "{session}"},
		Output: exec.Output{
			NativeID: []exec.Rule{{Pattern: regexp.MustCompile(`^session (\S+) ready`)}},
			Ready:    []exec.Rule{{Pattern: regexp.MustCompile(`^session \S+ ready`)}},
		},
		LaunchExtra: func(_ context.Context, req engine.StartRequest) (exec.Extra, error) {
			return exec.Extra{Flags: []string{"{launch}"}, Env: []string{"X_SECRET=s3cret", "BATON_LAUNCH_ID" + "=forged"}}, nil
		},
	}
	e := newEngine(t, exec.Options{Profile: prof, Env: []string{"PATH=" + os.Getenv("PATH")}})
	ctx := testCtx(t)
	launch := newLaunchID("env")
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Prompt: "hi", LaunchID: launch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	waitDone(t, p)
	want := "session s1 ready s3cret " + string(launch) + " " + string(launch)
	var found bool
	for _, ev := range events(t, e, "s1") {
		found = found || ev.Text == want
	}
	if !found {
		t.Errorf("no transcript line %q: %+v", want, events(t, e, "s1"))
	}
}
