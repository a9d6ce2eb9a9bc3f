package clitest

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/exec"
)

// Main builds each named program of ./testdata (a stand-in agent, a host
// to crash) into a temporary directory, records its path in bins under its
// name, runs the tests, removes the directory and exits with the tests'
// code. A build failure exits 1 before any test runs. Call it from
// TestMain.
func Main(m *testing.M, bins map[string]string, names ...string) {
	dir, err := os.MkdirTemp("", "baton-clitest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, name := range names {
		out := filepath.Join(dir, name)
		cmd := osexec.Command("go", "build", "-o", out, "./testdata/"+name)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building testdata/%s: %v\n", name, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		bins[name] = out
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// NewEngine builds an exec engine with opts and closes it (within 30 s)
// when the test ends, reporting a failed Close as a test error.
func NewEngine(t testing.TB, opts exec.Options) *exec.Engine {
	t.Helper()
	e, err := exec.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	Cleanup(t, "exec engine Close", e.Close)
	return e
}

// Cleanup calls stop with a context of 30 s when the test ends, and
// reports its error, prefixed with what, as a test error.
func Cleanup(t testing.TB, what string, stop func(context.Context) error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := stop(ctx); err != nil {
			t.Errorf("%s: %v", what, err)
		}
	})
}

// Ctx returns a context that ends after d or with the test.
func Ctx(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Dir creates the directory elem joined under root (mode 0700) and returns
// its path.
func Dir(t testing.TB, root string, elem ...string) string {
	t.Helper()
	d := filepath.Join(append([]string{root}, elem...)...)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

// Home returns a fresh, empty home directory for one CLI (removed when the
// test ends): its HOME, and Codex's CODEX_HOME.
func Home(t testing.TB) string {
	t.Helper()
	return Dir(t, t.TempDir(), "home")
}
