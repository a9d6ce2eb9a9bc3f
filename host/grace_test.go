package host_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// The default grace (ten minutes, on a fake clock) expires into a rescan
// and exactly one structured report, through zap's real JSON encoder, of
// what holds the generation; nothing is aborted, and the session parks
// when its turn ends.
func TestGraceExpiryReportsAndNeverAborts(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	var out hosttest.Buffer
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), &out, zap.InfoLevel))
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.WithClock(host.Options{Logger: logger}, fake))
	w := hosttest.Dial(t, s.Socket)
	busy := w.Open(s.File("busy.jsonl"))
	idle := w.Open(s.File("idle.jsonl"))
	w.Prompt(busy, "sleep 600000")
	w.Prompt(busy, "queued behind it")
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("idle parked", hosttest.IsEvent("session_closed", idle))
	// A response goes out just before its request stops counting as in
	// flight; wait for that, so the report names only the turn.
	hosttest.PollUntil(t, "prompt requests ended", func() bool {
		held := s.Host.Holding()
		return len(held) == 1 && held[0].HostRequests == 0
	})
	<-fake.WaitTimers(2) // the grace and a sweep
	fake.Advance(host.DefaultGrace)

	var report map[string]any
	hosttest.PollUntil(t, "grace report", func() bool {
		for _, l := range out.Lines() {
			if strings.Contains(l, "grace expired") {
				if err := json.Unmarshal([]byte(l), &report); err != nil {
					t.Fatal(err)
				}
				return true
			}
		}
		return false
	})
	if report["level"] != "warn" || report["grace"] != host.DefaultGrace.Seconds() || report["sessionsHeld"] != float64(1) {
		t.Errorf("report = %v", report)
	}
	holding := report["holding"].([]any)
	if len(holding) != 1 {
		t.Fatalf("holding = %v", holding)
	}
	got := holding[0].(map[string]any)
	if got["sessionId"] != busy || got["phase"] != "open" || got["queued"] != float64(1) {
		t.Errorf("held session = %v", got)
	}
	if why := got["why"].([]any); len(why) != 2 || why[0] != "turn" || why[1] != "queued" {
		t.Errorf("why = %v, want [turn queued]", why)
	}
	if w.IsClosed() || len(s.Host.Holding()) != 1 {
		t.Fatal("the grace aborted the turn")
	}
	w.Abort(busy)
	w.WaitClosed()
	s.WaitDone(t)
	n := 0
	for _, l := range out.Lines() {
		if strings.Contains(l, "grace expired") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d grace reports, want 1", n)
	}
}
