package handofftest_test

import (
	"testing"

	"github.com/batonhq/baton/handoff/handofftest"
)

func TestMemstore(t *testing.T) {
	handofftest.Run(t, handofftest.Config{})
}
