package enginetest_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
)

func TestLifetimesAndOverlaps(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	ctx := context.Background()
	a := start(t, e, req("ws-a")) // launch 1
	b := start(t, e, req("ws-b")) // launch 2: another workspace, never an overlap
	if _, err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	c := start(t, e, req("ws-a")) // launch 3: after a ended
	d := start(t, e, req("ws-a")) // launch 4: while c runs
	if got := e.Overlaps(); !cmp.Equal(got, []enginetest.Overlap{{Workspace: "ws-a", First: 3, Second: 4}}) {
		t.Fatalf("Overlaps = %+v, want launches 3 and 4 of ws-a", got)
	}
	ls := e.Launches()
	if ls[0].Began == 0 || ls[0].Ended <= ls[0].Began || ls[2].Began <= ls[0].Ended {
		t.Fatalf("lifetimes: launch 1 [%d,%d), launch 3 began %d", ls[0].Began, ls[0].Ended, ls[2].Began)
	}
	if ls[1].Ended != 0 || ls[3].Ended != 0 {
		t.Fatalf("running processes have an end: %d, %d", ls[1].Ended, ls[3].Ended)
	}
	_, _ = b, c
	d.Finish(0, nil)
	if got := e.Launches()[3].Ended; got == 0 {
		t.Fatal("a finished process has no end")
	}
}

func TestReapLaunch(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{Default: enginetest.Script{StopOutcome: engine.Timeout}})
	ctx := context.Background()
	r := req("ws")
	r.LaunchID = "lau_1"
	p := start(t, e, r)
	other := start(t, e, req("ws-2"))
	tests := []struct {
		id   string
		want engine.StopOutcome
	}{
		{"lau_unknown", engine.NotRunning},
		{"lau_1", engine.Stopped}, // reaped although its own Stop times out
		{"lau_1", engine.NotRunning},
	}
	for _, tt := range tests {
		got, err := e.ReapLaunch(ctx, engineLaunchID(tt.id))
		if err != nil || got != tt.want {
			t.Fatalf("ReapLaunch(%s) = %s, %v; want %s", tt.id, got, err, tt.want)
		}
	}
	if p.Running() || !p.Exit().Stopped {
		t.Fatalf("reaped process: running=%v exit=%+v", p.Running(), p.Exit())
	}
	if !other.Running() {
		t.Fatal("ReapLaunch ended a process of another launch")
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if got, err := e.ReapLaunch(done, "lau_1"); got != engine.Timeout || err == nil {
		t.Fatalf("ReapLaunch with a done ctx = %s, %v", got, err)
	}
}

func engineLaunchID(s string) baton.LaunchID { return baton.LaunchID(s) }
