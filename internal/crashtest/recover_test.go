//go:build linux

package crashtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestRecoverSaysWhatItReaped SIGKILLs the host once its target is ready
// (the target's grandchild then outlives it, an orphan), and recovers
// twice: first with an engine that confirms no reap, whose Recover must
// name the target's launch and its workspace as not confirmed gone (and
// leave it held), then with the real engine, whose Recover must say it
// found that launch running and killed it, log it at info with its
// workspace, and leave no process of the run.
func TestRecoverSaysWhatItReaped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	t.Cleanup(func() { killRun(t, dir) })
	h := startHost(t, dir, "-mode", "run")
	target := ""
	for line := range h.lines {
		if strings.HasPrefix(line, "error") {
			h.kill()
			t.Fatalf("host: %s\nstderr:\n%s", line, h.stderr.String())
		}
		if strings.HasPrefix(line, "spawn target") {
			target = field(line, "launch")
		}
		if strings.HasPrefix(line, "state completed") {
			break
		}
	}
	h.kill()
	if target == "" {
		t.Fatalf("no target was spawned; the host said:\n%s", h.said())
	}
	if len(scan(dir)) == 0 {
		t.Fatal("nothing of the killed host outlived it: the test would check nothing")
	}

	out := runHost(t, ctx, dir, "recover", "-reap-fail")
	if !hasLine(out, "unreaped launch="+target+" workspace=ws ") || hasLine(out, "reaped launch=") {
		t.Errorf("a recovery that confirmed no reap did not say the target's launch %s is held:\n%s", target, strings.Join(out, "\n"))
	}
	if !hasLine(out, "held start=refused") {
		t.Errorf("the workspace was released while launch %s may run:\n%s", target, strings.Join(out, "\n"))
	}
	if n := logLines(out, "warn", target); n == 0 {
		t.Errorf("no warn log line names the held launch %s and workspace ws:\n%s", target, strings.Join(out, "\n"))
	}

	out = runHost(t, ctx, dir, "recover")
	if !hasLine(out, "reaped launch="+target+" workspace=ws ") || !strings.Contains(strings.Join(out, "\n"), "launch="+target+" workspace=ws session=") {
		t.Errorf("Recover did not say it reaped the target's launch %s:\n%s", target, strings.Join(out, "\n"))
	}
	for _, l := range out {
		if strings.HasPrefix(l, "reaped launch="+target) && field(l, "outcome") != "stopped" {
			t.Errorf("Recover found the orphaned target not running: %s", l)
		}
	}
	if hasLine(out, "unreaped") {
		t.Errorf("Recover left a launch unconfirmed:\n%s", strings.Join(out, "\n"))
	}
	if n := logLines(out, "info", target); n == 0 {
		t.Errorf("no info log line names the killed launch %s and workspace ws:\n%s", target, strings.Join(out, "\n"))
	}
	if left := scan(dir); len(left) > 0 {
		t.Errorf("Recover said it killed launch %s, and %v still run", target, left)
	}
}

// field returns the value of key=value in a host line.
func field(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}

// logLines counts the JSON log lines at level that name launch and
// workspace ws.
func logLines(out []string, level, launch string) int {
	n := 0
	for _, l := range out {
		var e map[string]any
		if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		if e["level"] == level && e["launch"] == launch && e["workspace"] == "ws" {
			n++
		}
	}
	return n
}
