//go:build !baton_failpoints

package failpoint_test

import (
	"testing"

	"github.com/batonhq/baton/internal/failpoint"
)

// Without the tag no point can be armed and Enabled is a constant false.
func TestReleaseBuildHasNoFailpoints(t *testing.T) {
	if failpoint.Enabled || failpoint.Hit("anything") {
		t.Fatal("a failpoint fired in a build without baton_failpoints")
	}
}
