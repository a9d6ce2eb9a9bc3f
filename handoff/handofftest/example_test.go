package handofftest_test

import (
	"testing"

	"github.com/batonhq/baton/handoff/handofftest"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// A store backend proves that transfers keep their invariants on it in one
// line, in a test of its own package. NewStore opens a fresh, empty store
// for each random sequence. (This example is compiled, not run: the run is
// TestMemstore beside it.)
func ExampleRun() {
	_ = func(t *testing.T) { // func TestTransfers(t *testing.T) in your _test.go
		handofftest.Run(t, handofftest.Config{
			NewStore: func() (store.Store, func(), error) {
				s := memstore.New() // your backend, on a fresh directory or schema
				return s, func() { _ = s.Close() }, nil
			},
		})
	}
}
