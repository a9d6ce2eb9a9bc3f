//go:build baton_failpoints

package handofftest_test

import (
	"testing"

	"github.com/batonhq/baton/internal/failpoint"
)

// failpointBugs are the bugs no wrapper can express, planted at named
// failpoints in handoff and session (compiled in only with the
// baton_failpoints tag).
func failpointBugs() []plantedBug {
	fp := func(name, family, point string) plantedBug {
		return plantedBug{name: name, family: family, how: "failpoint", failpoint: point}
	}
	return []plantedBug{
		// The three bugs found in the code before this harness, kept planted.
		fp("StopOnAnyNodeConfirmed", "fencing", "handoff/stop-anywhere"),
		fp("EarlyEndBeforeReadyLost", "launch races", "session/record-end-skips-idle"),
		fp("ShutdownKeepsUnconfirmed", "shutdown", "handoff/shutdown-keeps-unconfirmed"),
		// The earlier planted set.
		fp("ReplayAnyFingerprint", "idempotency", "handoff/replay-any-fingerprint"),
		fp("ReconcileRelaunches", "fencing", "handoff/reconcile-relaunches"),
		fp("NoTokenCheck", "attempt tagging", "handoff/no-token-check"),
		fp("UnconfirmedStopIsStop", "attempt tagging", "handoff/unconfirmed-stop-is-stop"),
		// Issue families.
		fp("ReconcileNoRetake", "fencing", "handoff/reconcile-no-retake"),
		fp("OwnerNotChecked", "fencing", "session/skip-owner-check"),
		fp("StaleCallbackApplied", "attempt tagging", "handoff/stale-callback-applied"),
		fp("CallbackAfterStop", "attempt tagging", "handoff/callback-after-stop"),
		fp("TimeoutIgnoresUnconfirmed", "attempt tagging", "handoff/timeout-ignores-unconfirmed"),
		fp("RetryKeepsTarget", "launch races", "handoff/retry-keeps-target"),
		fp("TargetActivatedEarly", "launch races", "handoff/activate-target-early"),
		fp("ShutdownNoSettle", "shutdown", "handoff/shutdown-no-settle"),
		fp("WakeupFiredWhileReserved", "sessions", "session/fire-while-reserved"),
	}
}

func arm(name string) func() { return failpoint.Enable(name) }

// evaluated fails when a failpoint bug's site was never reached: the
// point's name and its site disagree, and the bug was never planted.
func evaluated(t *testing.T, bug plantedBug) {
	t.Helper()
	if bug.failpoint != "" && failpoint.Evaluated(bug.failpoint) == 0 {
		t.Fatalf("failpoint %s was never evaluated: its site is missing", bug.failpoint)
	}
}
