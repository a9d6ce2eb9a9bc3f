//go:build linux

package main

import (
	"bytes"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/exec/clitest"
)

const (
	sourceReply = "I fixed the tokenizer in parse.go; TestParse passes now."
	report      = "## Handoff\nThe tokenizer in parse.go is fixed; TestParse passes. Next: the error messages."
)

// TestCrashRecoverRetry runs the program against the real Claude Code CLI
// and a scripted Messages API: its transfer with a report stores the
// report (submitted over MCP), and the program is SIGKILLed while the
// target's first request is held. The CLI dies with it (no process of the
// run is left), and a second run recovers the transfer as interrupted,
// with its report, and retries it: the target reads the source's history,
// and the report was written once.
func TestCrashRecoverRetry(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	// The model does its part of the transfer; the target's first request
	// is held until the CLI goes away (the program is killed meanwhile).
	held := clitest.NewGate()
	api := clitest.NewMessages(t, clitest.Transfer{Reply: sourceReply, Report: report, Hold: func(n int) *clitest.Gate {
		if n == 1 {
			return held
		}
		return nil
	}}.Script())
	root := t.TempDir()
	prog := filepath.Join(root, "agent")
	if out, err := osexec.Command("go", "build", "-o", prog, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, project, home := clitest.Dir(t, root, "data"), clitest.Dir(t, root, "project"), clitest.Dir(t, root, "home")
	env := append(api.ClaudeEnv(home), clitest.EnvClaudeBin+"="+bin)
	ctx := clitest.Ctx(t, 4*time.Minute)
	run := func() (*osexec.Cmd, *bytes.Buffer) {
		var out bytes.Buffer
		cmd := osexec.CommandContext(ctx, prog, data, project)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}

	// The first run: killed while the target's first request is held.
	cmd, out := run()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-held.Held():
	case err := <-exited:
		t.Fatalf("the program ended (%v) before the target's request:\n%s", err, out)
	case <-ctx.Done():
		t.Fatalf("the target's request never came:\n%s", out)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || st.Signal() != syscall.SIGKILL {
		t.Fatalf("the first run ended %v; want killed:\n%s", cmd.ProcessState, out)
	}
	waitGone(t, home)

	// The second run recovers and retries.
	cmd, out = run()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the second run: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "recovered hof_") || !strings.HasSuffix(lines[0], " interrupted report kept: true") ||
		!strings.Contains(lines[1], " completed attempt 2 report: true") {
		t.Fatalf("the second run printed:\n%s\nwant the transfer recovered with its report, then completed at attempt 2", out)
	}

	var reports, targets int
	for _, r := range api.Streamed() {
		if len(r.Results()) > 0 {
			continue
		}
		if _, ok := r.Tool(clitest.ToolSubmit); ok {
			reports++
		}
		if _, ok := r.Tool(clitest.ToolHistory); ok {
			targets++
			if !strings.Contains(r.LastUser(), report) {
				t.Errorf("a target was briefed without the report:\n%s", r.LastUser())
			}
		}
	}
	pages := clitest.HistoryPages(api)
	if reports != 1 || targets != 2 || len(pages) != 1 {
		t.Fatalf("report-only turns %d, target turns %d, history pages read %d; want 1, 2 (one killed), 1", reports, targets, len(pages))
	}
	if p := pages[0]; p.IsError || !strings.Contains(p.Text, "Fix the parser.") || !strings.Contains(p.Text, sourceReply) ||
		strings.Contains(p.Text, "Do not continue the work") {
		t.Errorf("the target's history page is not the source conversation without its report-only turn: %+v", p)
	}
}

// waitGone waits until no process runs with HOME=home in its environment
// (the CLIs of a run): the parent-death signal ends a killed program's
// CLI.
func waitGone(t *testing.T, home string) {
	t.Helper()
	want := []byte("HOME=" + home + "\x00")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(b, want) && !zombie(pid) {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the killed run still run: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	return len(f) == 0 || f[0] == "Z" || f[0] == "X"
}
