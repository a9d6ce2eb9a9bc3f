package host

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton/internal/clock"
)

// lockedBuffer is a zapcore.WriteSyncer safe for the host's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Sync() error { return nil }

func (l *lockedBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Split(strings.TrimSpace(l.b.String()), "\n")
}

// The default grace (ten minutes, on a fake clock) expires into a rescan
// and exactly one structured report, through zap's real JSON encoder, of
// what holds the generation; nothing is aborted, and the session parks
// when its turn ends.
func TestGraceExpiryReportsAndNeverAborts(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	var out lockedBuffer
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), &out, zap.InfoLevel))
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{Logger: logger, clock: fake})
	w := dial(t, s.sock)
	busy := w.open(s.file("busy.jsonl"))
	idle := w.open(s.file("idle.jsonl"))
	w.mustCall(Command{Type: CmdPrompt, SessionID: busy, Text: "sleep 600000"})
	w.mustCall(Command{Type: CmdPrompt, SessionID: busy, Text: "queued behind it"})
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	w.waitFor("idle parked", isEvent(EventSessionClosed, idle))
	// A response goes out just before its request stops counting as in
	// flight; wait for that, so the report names only the turn.
	pollUntil(t, "prompt requests ended", func() bool {
		held := s.h.Holding()
		return len(held) == 1 && held[0].HostRequests == 0
	})
	<-fake.WaitTimers(2) // the grace and a sweep
	fake.Advance(DefaultGrace)

	var report map[string]any
	pollUntil(t, "grace report", func() bool {
		for _, l := range out.lines() {
			if strings.Contains(l, "grace expired") {
				if err := json.Unmarshal([]byte(l), &report); err != nil {
					t.Fatal(err)
				}
				return true
			}
		}
		return false
	})
	if report["level"] != "warn" || report["grace"] != DefaultGrace.Seconds() || report["sessionsHeld"] != float64(1) {
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
	if w.isClosed() || len(s.h.Holding()) != 1 {
		t.Fatal("the grace aborted the turn")
	}
	w.mustCall(Command{Type: CmdAbort, SessionID: busy})
	w.waitClosed()
	s.waitDone(t)
	n := 0
	for _, l := range out.lines() {
		if strings.Contains(l, "grace expired") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d grace reports, want 1", n)
	}
}
