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
	return []plantedBug{}
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
