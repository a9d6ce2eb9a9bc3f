package facts_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/batonhq/baton/handoff/facts"
)

// A directory that is not a git repository gives a short honest line, not
// an error; the checks the caller knows are listed all the same.
func ExampleGather() {
	dir, err := os.MkdirTemp("", "facts-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	f := facts.Gather(context.Background(), dir, time.Now().Add(-time.Hour), facts.Options{
		Checks: []facts.Check{{Command: "go test ./...", ExitCode: 1, Summary: "2 tests failed"}},
	})
	fmt.Print(f.Markdown())
	// Output:
	// Checks the previous session ran, oldest first (1):
	// - `go test ./...`: exit 1, `2 tests failed`
	//
	// Note: The workspace is not a git repository: no git facts.
}
