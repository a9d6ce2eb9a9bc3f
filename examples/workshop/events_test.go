package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// handoffEvents reads handoff events of hid from events until its state
// is final, and returns them.
func handoffEvents(t *testing.T, events <-chan sseEvent, hid, final string) []sseEvent {
	t.Helper()
	var out []sseEvent
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("stream ended after %d handoff events", len(out))
			}
			if ev.Event != "handoff" {
				continue
			}
			var d eventJSON
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				t.Fatal(err)
			}
			if string(d.Handoff.ID) != hid {
				continue
			}
			out = append(out, ev)
			if string(d.Handoff.State) == final {
				return out
			}
		case <-timeout:
			t.Fatalf("no %s event; got %d handoff events", final, len(out))
		}
	}
}

func states(t *testing.T, evs []sseEvent) []string {
	t.Helper()
	var out []string
	for _, ev := range evs {
		var d eventJSON
		if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
			t.Fatal(err)
		}
		if s := string(d.Handoff.State); len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// TestEventStream: the stream delivers every state of a transfer in
// order with increasing ids, then resumes after a Last-Event-ID with
// exactly the events that followed it.
func TestEventStream(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-heartbeat", "50ms")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := p.subscribe(ctx, ws, "")
	hid := p.handoff(ws, "sse-1", src, "demo-2", true)
	got := handoffEvents(t, live, hid, "completed")
	if diff := cmp.Diff([]string{"stopping", "generating", "starting", "completed"}, states(t, got)); diff != "" {
		t.Fatalf("states (-want +got):\n%s", diff)
	}
	var last int64
	for _, ev := range got {
		id, err := strconv.ParseInt(ev.ID, 10, 64)
		if err != nil || id <= last {
			t.Fatalf("event id %q after %d: not increasing", ev.ID, last)
		}
		last = id
	}
	// Resume after the first event: the same handoff events follow.
	resumed := p.subscribe(ctx, ws, got[0].ID)
	again := handoffEvents(t, resumed, hid, "completed")
	if diff := cmp.Diff(got[1:], again); diff != "" {
		t.Fatalf("resumed events (-want +got):\n%s", diff)
	}
	// An "after" query parameter does the same for clients that cannot
	// set headers; a malformed id is refused.
	if r := p.do("GET", "/api/workspaces/"+ws+"/events", nil, "Last-Event-ID", "x"); r.Status != http.StatusBadRequest {
		t.Errorf("bad Last-Event-ID = %d", r.Status)
	}
	if r := p.do("GET", "/api/workspaces/ws-missing/events", nil); r.Status != http.StatusNotFound {
		t.Errorf("events of unknown workspace = %d", r.Status)
	}
}

// TestEventStreamHeartbeatAndShutdown: an idle stream gets heartbeats,
// and a SIGTERM ends it cleanly (the server does not wait for it).
func TestEventStreamHeartbeatAndShutdown(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-heartbeat", "20ms")
	ws := p.workspace("demo-1")
	res, err := http.Get(p.base + "/api/workspaces/" + ws + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 4096)
	var seen strings.Builder
	for !strings.Contains(seen.String(), ": heartbeat") {
		n, err := res.Body.Read(buf)
		if err != nil {
			t.Fatalf("stream: %v after %q", err, seen.String())
		}
		seen.Write(buf[:n])
	}
	start := time.Now()
	p.stop(syscall.SIGTERM)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("shutdown took %v with a stream open", d)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM:\n%s", code, p.logs.String())
	}
	for {
		if _, err := res.Body.Read(buf); err != nil {
			break // the stream ended
		}
	}
}

// TestRestart: a transfer begun on a slow target, the server killed with
// SIGKILL, started again on the same directory: the transfer is
// interrupted, nothing was relaunched, and retry completes it.
func TestRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startBinary(t, dir, "-demo-slow-ready", "1m")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	hid := p.handoff(ws, "restart-1", src, "slow-ready", true)
	p.waitHandoff(ws, hid, "starting")
	before := len(p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil).Body["sessions"].([]any))
	p.stop(syscall.SIGKILL)

	q := startBinary(t, dir, "-demo-slow-ready", "50ms")
	// Reconciliation ran before the server became ready: no wait.
	h := q.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs/"+hid, nil).Body["handoff"].(map[string]any)
	if h["state"] != "interrupted" {
		t.Fatalf("after the restart the handoff is %v, want interrupted", h["state"])
	}
	if h["hasReport"] != true {
		t.Errorf("the report was lost: %v", h)
	}
	// Nothing was relaunched: no session runs and none was added.
	r := q.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
	ss := r.Body["sessions"].([]any)
	for _, s := range ss {
		if st := s.(map[string]any)["status"]; st == "running" {
			t.Errorf("a session runs after the restart: %v", s)
		}
	}
	if len(ss) != before {
		t.Errorf("%d sessions after the restart, %d before: something was launched", len(ss), before)
	}
	q.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "retry"})
	h = q.waitHandoff(ws, hid, "completed")
	if h["attempt"] != float64(2) {
		t.Errorf("completed on attempt %v, want 2", h["attempt"])
	}
	if _, err := os.Stat(filepath.Join(dir, "instance-id")); err != nil {
		t.Errorf("instance id not kept: %v", err)
	}
}

// TestGracefulShutdown: SIGTERM during a transfer exits 0 after the
// shutdown turned the transfer interrupted (Coordinator.Shutdown); after a
// restart it is still interrupted, nothing relaunched, and retry completes
// it.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := startBinary(t, dir, "-demo-slow-ready", "1m", "-log-level", "info")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	hid := p.handoff(ws, "term-1", src, "slow-ready", false)
	p.waitHandoff(ws, hid, "starting")
	p.stop(syscall.SIGTERM)
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, p.logs.String())
	}
	// The transition the shutdown made, as the server logged it.
	if !strings.Contains(p.logs.String(), `"trigger":"Shutdown","state":"interrupted"`) {
		t.Fatalf("no Shutdown transition to interrupted in the log:\n%s", p.logs.String())
	}
	q := startBinary(t, dir, "-demo-slow-ready", "10ms")
	if r := q.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs/"+hid, nil); str(r.Body, "handoff", "state") != "interrupted" {
		t.Fatalf("after a graceful shutdown and a restart the handoff is %s, want interrupted", r.Raw)
	}
	q.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "retry"})
	q.waitHandoff(ws, hid, "completed")
}
