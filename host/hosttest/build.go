package hosttest

import (
	"context"
	"os"
	"os/exec"
)

// Build compiles the main package pkg, named as go build takes it ("."
// for the package under test, run from its directory), into the file out,
// with -race when the running test binary was built with -race: the host
// processes a test starts are then checked by the race detector as well.
// It is meant for TestMain, before m.Run. The go command's output goes to
// os.Stderr; Build returns its error, or ctx's.
func Build(ctx context.Context, pkg, out string) error {
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}
