package host

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitLimit bounds every wait of these tests; nothing sleeps to
// synchronise.
const waitLimit = 10 * time.Second

// tempDir returns a short directory under /tmp: a unix socket path must
// fit in 108 bytes.
func tempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	// Resolve /tmp symlinks so canonical paths compare equal.
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// served is a host serving a real unix socket in this process.
type served struct {
	h      *Host
	sock   string
	dir    string
	served chan error
}

func serveHost(t testing.TB, rt Runtime, opts Options) *served {
	t.Helper()
	dir := tempDir(t)
	if opts.ClaimDir == "" {
		opts.ClaimDir = filepath.Join(dir, "claims")
	}
	h, err := New(rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	s := &served{h: h, sock: sock, dir: dir, served: make(chan error, 1)}
	go func() { s.served <- h.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case <-s.served:
		case <-ctx.Done():
			t.Errorf("Serve did not return after Close")
		}
	})
	return s
}

// waitDone waits for the host to finish its drain and checks that Serve
// returned nil.
func (s *served) waitDone(t testing.TB) {
	t.Helper()
	select {
	case err := <-s.served:
		if err != nil {
			t.Fatalf("Serve after drain = %v, want nil", err)
		}
		s.served <- nil
	case <-time.After(waitLimit):
		t.Fatalf("host did not finish its drain; still holding %+v", s.h.Holding())
	}
}

func (s *served) file(name string) string { return filepath.Join(s.dir, name) }

// wire is a client connection that records every record it receives.
type wire struct {
	t      testing.TB
	c      *Client
	mu     sync.Mutex
	recs   []Record
	notify chan struct{}
}

func dial(t testing.TB, sock string) *wire {
	t.Helper()
	w := &wire{t: t, notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := Dial(ctx, sock, ClientOptions{OnRecord: w.record})
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	t.Cleanup(func() { _ = c.Close() })
	return w
}

func (w *wire) record(r Record) {
	w.mu.Lock()
	w.recs = append(w.recs, r)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *wire) records() []Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Record(nil), w.recs...)
}

func (w *wire) call(cmd Command) (Record, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rec, err := w.c.Call(ctx, cmd)
	if errors.Is(err, context.DeadlineExceeded) {
		w.t.Fatalf("%s: no response", cmd.Type)
	}
	return rec, err
}

func (w *wire) mustCall(cmd Command) Record {
	w.t.Helper()
	rec, err := w.call(cmd)
	if err != nil {
		w.t.Fatalf("%s: %v", cmd.Type, err)
	}
	return rec
}

func (w *wire) open(path string) string {
	w.t.Helper()
	var res OpenResult
	if err := w.mustCall(Command{Type: CmdOpenSession, SessionPath: path}).DecodeData(&res); err != nil {
		w.t.Fatal(err)
	}
	return res.SessionID
}

func (w *wire) state(id string) SessionState {
	w.t.Helper()
	var st SessionState
	if err := w.mustCall(Command{Type: CmdGetState, SessionID: id}).DecodeData(&st); err != nil {
		w.t.Fatal(err)
	}
	return st
}

// waitFor returns the first record matching pred, waiting for it.
func (w *wire) waitFor(what string, pred func(Record) bool) Record {
	w.t.Helper()
	deadline := time.After(waitLimit)
	next := 0 // records before next were already checked
	for {
		if r, ok := w.scan(&next, pred); ok {
			return r
		}
		select {
		case <-w.notify:
		case <-w.c.Done():
			if r, ok := w.scan(&next, pred); ok {
				return r
			}
			w.t.Fatalf("connection closed before %s; got %v", what, tail(labels(w.records())))
		case <-deadline:
			w.t.Fatalf("no %s within %v; got %v", what, waitLimit, tail(labels(w.records())))
		}
	}
}

// scan checks the records from *next on, without copying them.
func (w *wire) scan(next *int, pred func(Record) bool) (Record, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ; *next < len(w.recs); *next++ {
		if pred(w.recs[*next]) {
			return w.recs[*next], true
		}
	}
	return Record{}, false
}

// tail keeps the last labels of a long record list for a failure message.
func tail(ls []string) []string {
	if len(ls) > 40 {
		return append([]string{"..."}, ls[len(ls)-40:]...)
	}
	return ls
}

// waitClosed waits until the host closes the connection.
func (w *wire) waitClosed() {
	w.t.Helper()
	select {
	case <-w.c.Done():
	case <-time.After(waitLimit):
		w.t.Fatalf("connection still open; got %v", labels(w.records()))
	}
}

func (w *wire) isClosed() bool {
	select {
	case <-w.c.Done():
		return true
	default:
		return false
	}
}

func isType(typ string) func(Record) bool {
	return func(r Record) bool { return r.Type == typ }
}

func isEvent(typ, sessionID string) func(Record) bool {
	return func(r Record) bool { return r.Type == typ && r.SessionID == sessionID }
}

// label names a record compactly for order assertions.
func label(r Record) string {
	switch r.Type {
	case TypeResponse:
		if r.Success {
			return "response:" + r.Command
		}
		return "response:" + r.Command + ":" + r.Error
	case EventSessionClosed:
		return r.Type + ":" + string(r.Reason)
	}
	return r.Type
}

func labels(rs []Record) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, label(r))
	}
	return out
}

// wireOrder keeps the labels of the records of one session (or of the
// host) from the announcement on: host_superseded, then the session's
// events and responses in the order they arrived.
func wireOrder(rs []Record, sessionID string, keep ...string) []string {
	var out []string
	for _, r := range rs {
		l := label(r)
		if r.Type == EventHostSuperseded {
			out = append(out, l)
			continue
		}
		if len(out) == 0 || (r.SessionID != sessionID && r.Type != TypeResponse) {
			continue
		}
		for _, k := range keep {
			if strings.HasPrefix(l, k) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

func checkOrder(t testing.TB, got, want []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("wire order (-want +got):\n%s", d)
	}
}

// pollUntil polls cond until it holds, bounded by waitLimit: for states
// that offer no channel to wait on.
func pollUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, waitLimit)
		}
		<-tick.C
	}
}
