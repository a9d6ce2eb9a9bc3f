package handoff_test

import (
	"strings"
	"testing"

	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// A target stopped before it confirmed readiness, by a stop the driver did
// not make (here the host halting the workspace), did not finish its first
// turn: the transfer fails, it does not complete with its target gone.
func TestTargetStoppedBeforeReadyFails(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.launches(2)
	f.wait(h.ID, store.StateStarting)
	if _, err := handoff.Supervise(f.svc).Halt(f.ctx, f.ws); err != nil {
		t.Fatalf("Halt: %v", err)
	}
	got := f.wait(h.ID, store.StateFailed)
	if !strings.Contains(got.Error, "stopped") {
		t.Errorf("error %q, want it to say the target was stopped", got.Error)
	}
	if cur := f.current(); cur.ID != f.src.ID {
		t.Errorf("current session %s, want the source %s back", cur.ID, f.src.ID)
	}
}
