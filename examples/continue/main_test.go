package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	// Each key line, in this order.
	want := []string{
		"process 1\n",
		"  run A: killed before its session existed (engine: process exited before ready)\n",
		"  run B: session ready, native id native-2\n",
		"process 2 (a new Service over the same store)\n",
		"  fix-flaky-test: fresh\n",
		`    why: no session with a native id on engine "demo" with the default account: a fresh session briefed from the record` + "\n",
		"    briefing sent: yes\n",
		"    the engine received (mode fresh):\n",
		"    | # NEW session: you do not remember the previous one\n",
		"    | > " + taskA + "\n",
		"    | ## How the previous session ended\n",
		"    | > The agent process was killed (signal: killed) before its session started: the tool restarted while the run was waiting for its worktree.\n",
		"    | " + promptA + "\n",
		"  add-verbose-flag: resume\n",
		"    briefing sent: no\n",
		`    the engine received (mode resume, native id native-2): "` + promptB + `"` + "\n",
		"  run A's transcript now:\n",
		"    Note: a fresh session was seeded with a briefing\n",
		"    User: " + promptA + "\n",
	}
	rest := got
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q after the lines before it:\n%s", w, got)
		}
		rest = rest[i+len(w):]
	}
	// The task is stated once in the briefing, the message once, and the
	// transcript never holds the briefing.
	briefing := got[strings.Index(got, "  fix-flaky-test: fresh"):strings.Index(got, "  add-verbose-flag: resume")]
	if n := strings.Count(briefing, taskA); n != 1 {
		t.Errorf("task appears %d times in the briefing", n)
	}
	if n := strings.Count(briefing, promptA); n != 1 {
		t.Errorf("the message appears %d times in the briefing", n)
	}
	transcript := got[strings.Index(got, "  run A's transcript now:"):]
	if strings.Contains(transcript, "NEW session") {
		t.Error("the transcript records the briefing")
	}
}
