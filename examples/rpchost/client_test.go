package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batonhq/baton/host/hosttest"
)

// The reference client reattaches on handoff_parked by open_session
// {sessionPath} on the socket's new owner, and goes on there.
func TestClientReattachesOnHandoff(t *testing.T) {
	t.Parallel()
	dir, sock, a := serveFresh(t)
	file := filepath.Join(dir, "a.jsonl")
	cmd := exec.Command(binary, "client", "-socket", sock, "-session", file)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &hosttest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan map[string]any, 256)
	var raw sync.Mutex
	var seen []string
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			raw.Lock()
			seen = append(seen, sc.Text())
			raw.Unlock()
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
	}()
	expect := func(what string, pred func(map[string]any) bool) map[string]any {
		t.Helper()
		deadline := time.After(waitLimit)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("client ended before %s; stderr: %s", what, stderr)
				}
				if pred(m) {
					return m
				}
			case <-deadline:
				raw.Lock()
				defer raw.Unlock()
				t.Fatalf("no %s from the client; it printed:\n%q", what, seen)
			}
		}
	}
	message := func(text string) func(map[string]any) bool {
		return func(m map[string]any) bool { return m["type"] == "message" && m["text"] == text }
	}
	opened := expect("opened", func(m map[string]any) bool { return m["event"] == "opened" })
	fmt.Fprintln(stdin, "hello")
	first := expect("echo", message("hello"))
	if first["sessionId"] != opened["sessionId"] {
		t.Errorf("echo on %v, opened %v", first["sessionId"], opened["sessionId"])
	}

	b := startServe(t, sock)
	expect("host_superseded", func(m map[string]any) bool { return m["type"] == "host_superseded" })
	expect("handoff_parked", func(m map[string]any) bool { return m["reason"] == "handoff_parked" })
	re := expect("reattached", func(m map[string]any) bool { return m["event"] == "reattached" })
	if re["instanceId"] != b.serving.InstanceID || re["generation"] != float64(2) || re["previousInstanceId"] != a.serving.InstanceID {
		t.Errorf("reattached = %v, successor %+v", re, b.serving)
	}
	fmt.Fprintln(stdin, "again")
	again := expect("echo on the successor", message("again"))
	if again["sessionId"] != re["sessionId"] {
		t.Errorf("echo on %v, reattached as %v", again["sessionId"], re["sessionId"])
	}
	if code := a.waitExit(); code != 0 {
		t.Fatalf("old generation exit = %d", code)
	}
	_ = stdin.Close()
	expect("closed", func(m map[string]any) bool { return m["event"] == "closed" })
	if err := cmd.Wait(); err != nil {
		t.Fatalf("client: %v; stderr: %s", err, stderr)
	}
	b.signal(syscall.SIGTERM)
	if code := b.waitExit(); code != 0 {
		t.Errorf("successor exit = %d", code)
	}
}
