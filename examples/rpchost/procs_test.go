package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/host/hosttest"
)

// waitLimit bounds every wait on a process; nothing sleeps to
// synchronise.
const waitLimit = hosttest.DefaultTimeout

// binary is the rpchost built once for every test of the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rpchost-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "rpchost")
	if err := hosttest.Build(context.Background(), ".", binary); err != nil {
		fmt.Fprintln(os.Stderr, "build rpchost:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running rpchost serve.
type proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	serving servingLine
	stdout  *hosttest.Buffer // after the serving line
	stderr  *hosttest.Buffer
	exited  chan struct{}
	state   *os.ProcessState
}

// startServe runs rpchost serve on sock and waits for its serving line,
// which must be its only line on stdout and carry exactly the documented
// fields.
func startServe(t testing.TB, sock string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "-socket", sock}, args...)...)
	p := &proc{t: t, cmd: cmd, stdout: &hosttest.Buffer{}, stderr: &hosttest.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = r.WriteTo(p.stdout)
	}()
	go func() {
		<-copied
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	select {
	case line := <-first:
		var fields map[string]any
		if err := json.Unmarshal([]byte(line), &fields); err != nil {
			t.Fatalf("serving line %q: %v; stderr:\n%s", line, err, p.stderr)
		}
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range fields {
				if !yield(k) {
					return
				}
			}
		})
		if d := cmp.Diff([]string{"event", "generation", "instanceId", "pid", "socket"}, keys); d != "" {
			t.Fatalf("serving line fields (-want +got):\n%s", d)
		}
		if err := json.Unmarshal([]byte(line), &p.serving); err != nil {
			t.Fatal(err)
		}
		if p.serving.Event != "serving" || p.serving.PID != cmd.Process.Pid || p.serving.Socket != sock {
			t.Fatalf("serving line = %s", line)
		}
	case <-time.After(waitLimit):
		t.Fatalf("no serving line; stderr:\n%s", p.stderr)
	}
	return p
}

// waitExit waits for the process to exit and returns its exit status.
func (p *proc) waitExit() int {
	p.t.Helper()
	select {
	case <-p.exited:
	case <-time.After(waitLimit):
		p.t.Fatalf("pid %d did not exit; stderr:\n%s", p.cmd.Process.Pid, p.stderr)
	}
	if extra := p.stdout.String(); extra != "" {
		p.t.Errorf("more than one stdout line: %q", extra)
	}
	return p.state.ExitCode()
}

func (p *proc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// logs returns the JSON log events on stderr with the given message.
func (p *proc) logs(msg string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && ev["msg"] == msg {
			out = append(out, ev)
		}
	}
	return out
}

// serveFresh starts rpchost serve (with args) on a socket in a fresh
// directory.
func serveFresh(t testing.TB, args ...string) (dir, sock string, a *proc) {
	t.Helper()
	dir = hosttest.TempDir(t)
	sock = filepath.Join(dir, "h.sock")
	return dir, sock, startServe(t, sock, args...)
}

// serveAndDial is serveFresh and a client connected to it: the start of
// most handoff tests.
func serveAndDial(t *testing.T, args ...string) (dir, sock string, a *proc, w *hosttest.Conn) {
	t.Helper()
	dir, sock, a = serveFresh(t, args...)
	return dir, sock, a, hosttest.Dial(t, sock)
}
