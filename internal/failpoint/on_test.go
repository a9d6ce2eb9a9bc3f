//go:build baton_failpoints

package failpoint_test

import (
	"testing"

	"github.com/batonhq/baton/internal/failpoint"
)

func TestEnableHitDisable(t *testing.T) {
	const name = "test/enable-hit-disable"
	before := failpoint.Evaluated(name)
	if failpoint.Hit(name) {
		t.Fatal("a point is armed before Enable")
	}
	off := failpoint.Enable(name)
	off2 := failpoint.Enable(name)
	if !failpoint.Hit(name) {
		t.Fatal("Hit after Enable = false")
	}
	off()
	off() // idempotent: must not disarm the second Enable
	if !failpoint.Hit(name) {
		t.Fatal("one disarm of two arms disarmed the point")
	}
	off2()
	if failpoint.Hit(name) {
		t.Fatal("Hit after every disarm = true")
	}
	if got := failpoint.Evaluated(name) - before; got != 4 {
		t.Fatalf("Evaluated grew by %d, want 4", got)
	}
}
