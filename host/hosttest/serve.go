package hosttest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton/host"
)

// DefaultTimeout bounds every wait of this package: a wait that reaches it
// fails the test. Nothing here sleeps to synchronise; the bound only
// decides how long a broken test takes to fail, so it is generous enough
// for real processes under the race detector.
const DefaultTimeout = 20 * time.Second

// pollEvery is how often PollUntil checks its condition.
const pollEvery = 5 * time.Millisecond

// TempDir returns a fresh directory under the system's temporary
// directory, removed at t's cleanup. Unlike t.TempDir its path is short,
// since a unix socket path must fit in 108 bytes, and its symbolic links
// are resolved, so the canonical session paths a host reports compare
// equal to paths built from it.
func TempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// Served is a host serving a unix socket in the test's own process.
type Served struct {
	// Host is the host; the test drains it, or leaves it to the cleanup.
	Host *host.Host
	// Socket is the path of the socket it serves.
	Socket string
	// Dir is the TempDir that holds the socket; session files may go
	// there too (see File).
	Dir string
	// ClaimDir is the Options.ClaimDir the host was given.
	ClaimDir string

	done chan struct{} // closed once Serve returned
	err  error         // what Serve returned, set before done closes
}

// Serve creates a host on rt with opts and serves it on a fresh socket in
// a TempDir; an empty opts.ClaimDir is set to a directory of its own in
// that TempDir. The listener does not unlink the socket when closed (a
// successor may own the path by then). At t's cleanup the host is closed,
// and the test fails when Close fails or Serve has not returned within
// DefaultTimeout. Serve fails t when New or the listener fails.
func Serve(t testing.TB, rt host.Runtime, opts host.Options) *Served {
	t.Helper()
	dir := TempDir(t)
	if opts.ClaimDir == "" {
		opts.ClaimDir = filepath.Join(dir, "claims")
	}
	h, err := host.New(rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	s := &Served{Host: h, Socket: sock, Dir: dir, ClaimDir: opts.ClaimDir, done: make(chan struct{})}
	go func() {
		s.err = h.Serve(context.Background(), ln)
		close(s.done)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case <-s.done:
		case <-ctx.Done():
			t.Errorf("Serve did not return after Close")
		}
	})
	return s
}

// File returns the path of a file named name in Dir.
func (s *Served) File(name string) string { return filepath.Join(s.Dir, name) }

// ServeErr waits for Serve to return and returns its error: nil after a
// drain, an error matching host.ErrClosed after Close. It fails the test
// when Serve has not returned within DefaultTimeout. It may be called
// again, and returns the same error.
func (s *Served) ServeErr(t testing.TB) error {
	t.Helper()
	select {
	case <-s.done:
		return s.err
	case <-time.After(DefaultTimeout):
		t.Fatalf("Serve has not returned within %v", DefaultTimeout)
		return nil
	}
}

// WaitDone waits for the host to finish its drain: Serve returned nil. It
// fails the test, naming what still holds the host, otherwise.
func (s *Served) WaitDone(t testing.TB) {
	t.Helper()
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("Serve after drain = %v, want nil", s.err)
		}
	case <-time.After(DefaultTimeout):
		t.Fatalf("host did not finish its drain within %v", DefaultTimeout)
	}
}

// PollUntil checks cond every few milliseconds until it holds, and fails
// the test, naming what, when it still does not after DefaultTimeout. It
// is for states that offer no channel to wait on (a log line, a count of
// records).
func PollUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(DefaultTimeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, DefaultTimeout)
		}
		<-tick.C
	}
}

// Context returns a context that ends after DefaultTimeout, or at t's
// cleanup: the bound of a call made on a Conn's Client.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	t.Cleanup(cancel)
	return ctx
}
