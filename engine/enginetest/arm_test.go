package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// armClock notes how many launches the engine had recorded when each timer
// was armed. Start arms the readiness timer while it holds the engine's
// lock, on the same goroutine, so reading the record there is safe.
type armClock struct {
	*clock.Fake
	e       *Engine
	visible []int
}

func (c *armClock) NewTimer(d time.Duration) clock.Timer {
	c.visible = append(c.visible, len(c.e.launches))
	return c.Fake.NewTimer(d)
}

// A launch is visible (Launches, WaitLaunches) only once its readiness
// timer is armed: a test that sees it may advance the fake clock at once
// and must find the timer there. (The timer was armed after the launch was
// recorded; the harness saw a delayed target stay starting past its delay.)
func TestReadinessTimerArmedBeforeTheLaunchIsVisible(t *testing.T) {
	clk := &armClock{Fake: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	e := New(Options{Clock: clk, Default: Script{ReadyDelay: time.Second}})
	t.Cleanup(e.Close)
	clk.e = e
	req := engine.StartRequest{Workspace: "w", Config: baton.EngineConfig{Engine: "demo"}, Mode: engine.Fresh, Turn: transcript.Normal}
	if _, err := e.Start(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(clk.visible) != 1 || clk.visible[0] != 0 {
		t.Fatalf("launches recorded when the readiness timer was armed: %v, want [0]", clk.visible)
	}
}

// stuckClock tells the time of its Fake but arms timers on a clock that
// never moves: a readiness delay runs out without the process hearing of
// it, the moment ReadyDue describes, held open.
type stuckClock struct {
	*clock.Fake
	never *clock.Fake
}

func (c stuckClock) NewTimer(d time.Duration) clock.Timer { return c.never.NewTimer(d) }

func TestReadyDue(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	req := engine.StartRequest{Workspace: "w", Config: baton.EngineConfig{Engine: "demo"}, Mode: engine.Fresh, Turn: transcript.Normal}
	for _, tt := range []struct {
		name    string
		script  Script
		advance time.Duration
		want    bool
	}{
		{"delay not run out", Script{ReadyDelay: time.Second}, time.Second - 1, false},
		{"delay run out, not resolved yet", Script{ReadyDelay: time.Second}, time.Second, true},
		{"held", Script{Ready: ReadyHold, ReadyDelay: time.Second}, time.Hour, false},
		{"no delay: resolved within Start", Script{}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := stuckClock{Fake: clock.NewFake(start), never: clock.NewFake(start)}
			e := New(Options{Clock: clk, Default: tt.script})
			t.Cleanup(e.Close)
			p, err := e.Start(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			clk.Advance(tt.advance)
			if got := p.(*Process).ReadyDue(); got != tt.want {
				t.Errorf("ReadyDue = %v, want %v", got, tt.want)
			}
		})
	}
}
