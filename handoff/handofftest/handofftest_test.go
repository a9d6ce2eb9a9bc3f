package handofftest_test

import (
	"flag"
	"os"
	"testing"

	"github.com/batonhq/baton/handoff/handofftest"
)

// checksFromEnv sets -rapid.checks from BATON_RAPID_CHECKS when the flag is
// left at its default: BATON_RAPID_CHECKS=100000 go test ./handoff/handofftest/
// is a long run.
func checksFromEnv(t *testing.T) {
	t.Helper()
	if n := os.Getenv("BATON_RAPID_CHECKS"); n != "" {
		if f := flag.Lookup("rapid.checks"); f != nil && f.Value.String() == f.DefValue {
			setFlag(t, "rapid.checks", n)
		}
	}
}

// TestMemstore runs two coordinators on one store: frozen, crashed, shut
// down and restarted nodes, requests sent to any node.
func TestMemstore(t *testing.T) {
	checksFromEnv(t)
	handofftest.Run(t, handofftest.Config{})
}

// TestSingleNode runs the single-process world: one Coordinator, restarted
// in place.
func TestSingleNode(t *testing.T) {
	checksFromEnv(t)
	handofftest.Run(t, handofftest.Config{Nodes: 1})
}

// TestMemstoreUnsteered sends requests to any node and lets agent
// processes outlive the node that launched them (see Config.Unsteered).
func TestMemstoreUnsteered(t *testing.T) {
	checksFromEnv(t)
	handofftest.Run(t, handofftest.Config{Unsteered: true})
}
