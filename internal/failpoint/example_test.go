package failpoint_test

import (
	"fmt"

	"github.com/batonhq/baton/internal/failpoint"
)

// A site guards its faulty path with the constant first, so that a build
// without the baton_failpoints tag compiles the branch away.
func Example() {
	checkEpoch := func(have, want int64) error {
		if failpoint.Enabled && failpoint.Hit("example/skip-epoch-check") {
			return nil // the planted bug: the epoch is not compared
		}
		if have != want {
			return fmt.Errorf("stale epoch %d, want %d", have, want)
		}
		return nil
	}
	fmt.Println(checkEpoch(1, 2))
	// Output: stale epoch 1, want 2
}
