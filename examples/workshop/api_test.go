package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRoutes walks the API's rows that need no slow engine: workspaces,
// sessions, messages, stop, a transfer with its replay, mismatch and
// lookups, decisions and reports on a settled transfer, wakeups,
// instructions and the health checks.
func TestRoutes(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")

	// Workspaces.
	ws := p.workspace("demo-1")
	for _, c := range []struct {
		name string
		body any
	}{
		{"no name", map[string]any{"engine": "demo", "model": "demo-1"}},
		{"unknown engine", map[string]any{"name": "x", "engine": "nope", "model": "m"}},
		{"no engine", map[string]any{"name": "x"}},
		{"unknown field", map[string]any{"name": "x", "engine": "demo", "model": "demo-1", "color": "red"}},
		{"trailing data", `{"name":"x","engine":"demo","model":"demo-1"} {}`},
		{"not JSON", `name=x`},
		{"empty body", ""},
	} {
		if r := p.do("POST", "/api/workspaces", c.body); r.Status != http.StatusBadRequest || r.code() != "invalid-request" {
			t.Errorf("create workspace, %s: %d %s, want 400 invalid-request", c.name, r.Status, r.Raw)
		}
	}
	r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil)
	if str(r.Body, "workspace", "id") != ws || r.Body["currentSession"] != nil {
		t.Fatalf("GET workspace = %s", r.Raw)
	}
	if r := p.do("GET", "/api/workspaces/ws-missing", nil); r.Status != http.StatusNotFound || r.code() != "not-found" {
		t.Errorf("GET unknown workspace = %d %s", r.Status, r.Raw)
	}
	r = p.must(http.StatusOK, "GET", "/api/workspaces", nil)
	if n := len(r.Body["workspaces"].([]any)); n != 1 {
		t.Errorf("%d workspaces listed, want 1", n)
	}

	// Sessions, messages, stop.
	sid := p.session(ws)
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil)
	if str(r.Body, "currentSession", "id") != sid {
		t.Fatalf("current session = %s, want %s", r.Raw, sid)
	}
	r = p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/messages", map[string]any{"text": "and add tests"})
	insID := str(r.Body, "instruction", "id")
	if st := str(r.Body, "instruction", "state"); st != "pending" && st != "delivered" {
		t.Errorf("message state %q, want pending (busy) or delivered", st)
	}
	r = p.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/stop", nil)
	if o := str(r.Body, "outcome"); o != "stopped" && o != "not-running" {
		t.Errorf("stop outcome %q", o)
	}
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
	ss := r.Body["sessions"].([]any)
	first := ss[0].(map[string]any)
	for _, k := range []string{"id", "activationOrder", "nativeId", "status", "current"} {
		if _, ok := first[k]; !ok {
			t.Errorf("session lacks %q: %v", k, first)
		}
	}

	// Instructions.
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/instructions", nil)
	ins := r.Body["instructions"].([]any)
	if len(ins) != 1 || ins[0].(map[string]any)["id"] != insID {
		t.Fatalf("instructions = %s", r.Raw)
	}
	for _, k := range []string{"id", "text", "state", "createdAt"} {
		if _, ok := ins[0].(map[string]any)[k]; !ok {
			t.Errorf("instruction lacks %q", k)
		}
	}
	p.waitInstruction(ws, insID, "delivered", "unknown")
	r = p.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/instructions/"+insID+"/resend", nil)
	if str(r.Body, "instruction", "id") != insID {
		t.Errorf("resend = %s", r.Raw)
	}
	r = p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/messages", map[string]any{"text": "queued then withdrawn"})
	second := str(r.Body, "instruction", "id")
	if r := p.do("DELETE", "/api/workspaces/"+ws+"/instructions/"+second, nil); r.Status != http.StatusNoContent && r.code() != "instruction-delivered" {
		t.Errorf("DELETE instruction = %d %s", r.Status, r.Raw)
	}
	if r := p.do("DELETE", "/api/workspaces/"+ws+"/instructions/ins-missing", nil); r.Status != http.StatusNotFound {
		t.Errorf("DELETE unknown instruction = %d %s", r.Status, r.Raw)
	}

	// Wakeups.
	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	r = p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/wakeups", map[string]any{"prompt": "check the build", "at": at})
	if str(r.Body, "wakeup", "status") != "pending" {
		t.Errorf("wakeup = %s", r.Raw)
	}
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/wakeups", nil)
	if n := len(r.Body["wakeups"].([]any)); n != 1 {
		t.Errorf("%d wakeups, want 1", n)
	}

	// A transfer, its replay, a mismatch, lookups.
	p.waitIdle(ws)
	cur := str(p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil).Body, "workspace", "currentSessionId")
	req := handoffReq("req-1", cur, "demo-2", true)
	r = p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", req)
	hid := str(r.Body, "handoff", "id")
	h := r.Body["handoff"].(map[string]any)
	for _, k := range []string{"id", "workspaceId", "requestId", "state", "attempt", "sourceSessionId", "generateSummary", "hasReport", "history", "createdAt", "updatedAt"} {
		if _, ok := h[k]; !ok {
			t.Errorf("handoff lacks %q", k)
		}
	}
	for _, bad := range []string{"token", "generationToken", "GenerationToken", "tokenHash"} {
		if strings.Contains(string(r.Raw), bad) {
			t.Errorf("handoff JSON mentions %q: %s", bad, r.Raw)
		}
	}
	if r := p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", req); str(r.Body, "handoff", "id") != hid {
		t.Errorf("replay returned %s, want %s", str(r.Body, "handoff", "id"), hid)
	}
	if r := p.do("POST", "/api/workspaces/"+ws+"/session-handoffs", handoffReq("req-1", cur, "demo-3", true)); r.Status != http.StatusConflict || r.code() != "idempotency-mismatch" {
		t.Errorf("mismatch = %d %s", r.Status, r.Raw)
	}
	done := p.waitHandoff(ws, hid, "completed")
	if done["hasReport"] != true || !strings.Contains(str(done, "report"), "# Handoff report") || str(done, "reportPath") == "" {
		t.Errorf("completed handoff without its report: %v", done)
	}
	if r := p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", req); str(r.Body, "handoff", "state") != "completed" {
		t.Errorf("replay after completion = %s", r.Raw)
	}
	cur2 := str(p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil).Body, "workspace", "currentSessionId")
	if r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs/current", nil); r.Body["handoff"] != nil {
		t.Errorf("current after completion = %s", r.Raw)
	}
	for _, c := range []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"unknown handoff", "GET", "/session-handoffs/hof-missing", nil, 404, "not-found"},
		{"stale source", "POST", "/session-handoffs", handoffReq("req-2", cur, "demo-2", false), 409, "source-changed"},
		{"empty request id", "POST", "/session-handoffs", handoffReq("", "", "demo-2", false), 400, "invalid-request"},
		{"no target", "POST", "/session-handoffs", map[string]any{"requestId": "r9"}, 400, "invalid-request"},
		{"unknown target engine", "POST", "/session-handoffs", map[string]any{"requestId": "r9", "sourceSessionId": cur2, "target": map[string]any{"engine": "nope"}}, 400, "invalid-request"},
		{"decision: bad action", "POST", "/session-handoffs/" + hid + "/decision", map[string]any{"action": "jump"}, 400, "invalid-request"},
		{"decision: unknown handoff", "POST", "/session-handoffs/hof-missing/decision", map[string]any{"action": "retry"}, 404, "not-found"},
		{"decision: settled", "POST", "/session-handoffs/" + hid + "/decision", map[string]any{"action": "retry"}, 200, ""},
		{"report: not generating", "POST", "/session-handoffs/" + hid + "/report", map[string]any{"token": "x", "report": "# r"}, 409, "generation-inactive"},
		{"report: empty", "POST", "/session-handoffs/" + hid + "/report", map[string]any{"token": "x", "report": "  "}, 400, "invalid-request"},
		{"report: unknown field", "POST", "/session-handoffs/" + hid + "/report", map[string]any{"token": "x", "report": "r", "extra": 1}, 400, "invalid-request"},
	} {
		r := p.do(c.method, "/api/workspaces/"+ws+c.path, c.body)
		if r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
		}
	}
	if r := p.do("POST", "/api/workspaces/ws-missing/session-handoffs", handoffReq("r", "", "demo-2", false)); r.Status != http.StatusNotFound {
		t.Errorf("handoff in unknown workspace = %d %s", r.Status, r.Raw)
	}

	// Health.
	p.must(http.StatusOK, "GET", "/healthz", nil)
	p.must(http.StatusOK, "GET", "/readyz", nil)
	if r := p.do("GET", "/", nil); r.Status != http.StatusOK || !strings.Contains(string(r.Raw), "<title>baton workshop</title>") {
		t.Errorf("page = %d", r.Status)
	}
	if r := p.do("GET", "/api/machine.svg", nil); r.Status != http.StatusOK || strings.Count(string(r.Raw), `class="state"`) != 8 || strings.Count(string(r.Raw), `class="edge"`) < 8 {
		t.Errorf("machine.svg = %d %s", r.Status, r.Raw)
	}
}

// waitIdle polls until no session of ws runs.
func (p *proc) waitIdle(ws string) {
	p.t.Helper()
	deadline := p.deadline()
	for {
		r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
		running := false
		for _, s := range r.Body["sessions"].([]any) {
			running = running || s.(map[string]any)["status"] == "running"
		}
		if !running {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("a session still runs: %s", r.Raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitInstruction polls until instruction id is in one of states.
func (p *proc) waitInstruction(ws, id string, states ...string) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/instructions", nil)
		for _, x := range r.Body["instructions"].([]any) {
			m := x.(map[string]any)
			for _, s := range states {
				if m["id"] == id && m["state"] == s {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("instruction %s never reached %v: %s", id, states, r.Raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBusyGuard: while a transfer is pending, every mutating route of
// the workspace but the transfer's own and stop answers 409
// workspace-busy; reads are served; the transfer's routes answer for
// themselves.
func TestBusyGuard(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-demo-slow-ready", "1m")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	ins := str(p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/messages", map[string]any{"text": "later"}).Body, "instruction", "id")
	hid := p.handoff(ws, "busy-1", src, "slow-ready", false)
	p.waitHandoff(ws, hid, "starting")

	at := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/sessions", map[string]any{"prompt": "go"}},
		{"POST", "/messages", map[string]any{"text": "hi"}},
		{"POST", "/wakeups", map[string]any{"prompt": "p", "at": at}},
		{"POST", "/instructions/" + ins + "/resend", nil},
		{"DELETE", "/instructions/" + ins, nil},
	} {
		r := p.do(c.method, "/api/workspaces/"+ws+c.path, c.body)
		if r.Status != http.StatusConflict || r.code() != "workspace-busy" {
			t.Errorf("%s %s while pending = %d %s, want 409 workspace-busy", c.method, c.path, r.Status, r.Raw)
		}
	}
	for _, path := range []string{"", "/sessions", "/instructions", "/wakeups", "/session-handoffs", "/session-handoffs/" + hid} {
		p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+path, nil)
	}
	if r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs/current", nil); str(r.Body, "handoff", "id") != hid {
		t.Errorf("current while pending = %s, want %s", r.Raw, hid)
	}
	// The transfer's own routes are not guarded: they answer for themselves.
	if r := p.do("POST", "/api/workspaces/"+ws+"/session-handoffs", handoffReq("busy-2", src, "demo-2", false)); r.Code() != "transfer-pending" {
		t.Errorf("second transfer = %d %s, want 409 transfer-pending", r.Status, r.Raw)
	}
	if r := p.do("POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "retry"}); r.Status != http.StatusConflict || r.code() != "transfer-running" {
		t.Errorf("retry while starting = %d %s, want 409 transfer-running", r.Status, r.Raw)
	}
	if r := p.do("POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/report", map[string]any{"token": "t", "report": "r"}); r.code() != "generation-inactive" {
		t.Errorf("report while starting = %d %s", r.Status, r.Raw)
	}
	// Stop is served: it cancels the transfer (the target may not have
	// been launched yet: not-running is confirmed too).
	r := p.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/stop", nil)
	if o := str(r.Body, "outcome"); o != "stopped" && o != "not-running" {
		t.Errorf("stop = %s", r.Raw)
	}
	p.waitHandoff(ws, hid, "cancelled")
	p.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/instructions/"+ins+"/resend", nil)
}

// Code is resp.code for table tests that compare codes only.
func (r resp) Code() string { return r.code() }

// TestConcurrentCreates: two transfers with different request ids from
// the same source at once: exactly one wins.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	for i := range 5 {
		ws := p.workspace("demo-1")
		src := p.session(ws)
		var wg sync.WaitGroup
		got := make([]resp, 2)
		for j := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[j] = p.do("POST", "/api/workspaces/"+ws+"/session-handoffs", handoffReq("race-"+string(rune('a'+j)), src, "demo-2", false))
			}()
		}
		wg.Wait()
		statuses := []int{got[0].Status, got[1].Status}
		won := 0
		for _, r := range got {
			switch {
			case r.Status == http.StatusAccepted:
				won++
			case r.Status == http.StatusConflict && (r.code() == "transfer-pending" || r.code() == "source-changed"):
			default:
				t.Errorf("round %d: unexpected answer %d %s", i, r.Status, r.Raw)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: statuses %v, want exactly one 202", i, statuses)
		}
	}
}

// TestReportAndStopDuringGenerating: a wrong token and an over-long report
// are refused while a report is being generated; Stop then cancels the
// transfer and no target is launched.
func TestReportAndStopDuringGenerating(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-demo-report", "1m")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	hid := p.handoff(ws, "gen-1", src, "demo-2", true)
	p.waitHandoff(ws, hid, "generating")
	path := "/api/workspaces/" + ws + "/session-handoffs/" + hid + "/report"
	for _, c := range []struct {
		name   string
		report string
		status int
		code   string
	}{
		{"wrong token", "# my report", 409, "generation-inactive"},
		{"24,000 characters, wrong token", strings.Repeat("é", 24000), 409, "generation-inactive"},
		{"24,001 characters", strings.Repeat("é", 24001), 400, "invalid-request"},
		{"empty", "", 400, "invalid-request"},
	} {
		r := p.do("POST", path, map[string]any{"token": "not-the-token", "report": c.report})
		if r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
		}
	}
	big := `{"token":"x","report":"` + strings.Repeat("a", 1<<20) + `"}`
	if r := p.do("POST", path, big); r.Status != http.StatusRequestEntityTooLarge || r.code() != "too-large" {
		t.Errorf("1 MiB body = %d %s, want 413 too-large", r.Status, r.Raw)
	}
	r := p.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/stop", nil)
	if str(r.Body, "outcome") != "stopped" {
		t.Errorf("stop during generating = %s", r.Raw)
	}
	h := p.waitHandoff(ws, hid, "cancelled")
	if str(h, "targetSessionId") != "" || h["hasReport"] != false {
		t.Errorf("cancelled handoff = %v, want no target and no report", h)
	}
	sr := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
	if n := len(sr.Body["sessions"].([]any)); n != 1 {
		t.Errorf("%d sessions after the cancel, want only the source", n)
	}
}

// TestFailedTargetThenRetry: a target whose readiness is rejected fails
// the transfer; retry starts attempt 2, which completes.
func TestFailedTargetThenRetry(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	ws := p.workspace("demo-1")
	src := p.session(ws)
	hid := p.handoff(ws, "fail-1", src, "fail-ready", true)
	h := p.waitHandoff(ws, hid, "failed")
	if str(h, "error") == "" || h["attempt"] != float64(1) || h["hasReport"] != true {
		t.Fatalf("failed handoff = %v", h)
	}
	r := p.must(http.StatusOK, "POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "retry"})
	if str(r.Body, "handoff", "state") == "failed" {
		t.Fatalf("retry left it failed: %s", r.Raw)
	}
	h = p.waitHandoff(ws, hid, "completed")
	var outcomes []string
	for _, a := range h["history"].([]any) {
		outcomes = append(outcomes, a.(map[string]any)["outcome"].(string))
	}
	if diff := cmp.Diff([]string{"failed", "completed"}, outcomes); diff != "" || h["attempt"] != float64(2) {
		t.Errorf("history (-want +got):\n%s attempt %v", diff, h["attempt"])
	}
}

// TestStopUnconfirmed: a source whose stop is never confirmed fails the
// transfer with stopUnconfirmed set; retry is refused until a stop is
// confirmed.
func TestStopUnconfirmed(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-shutdown-grace", "200ms")
	ws := p.workspace("hang-stop")
	src := p.session(ws)
	hid := p.handoff(ws, "hang-1", src, "demo-2", false)
	h := p.waitHandoff(ws, hid, "failed")
	if h["stopUnconfirmed"] != true {
		t.Fatalf("handoff = %v, want stopUnconfirmed", h)
	}
	r := p.do("POST", "/api/workspaces/"+ws+"/session-handoffs/"+hid+"/decision", map[string]any{"action": "retry"})
	if r.Status != http.StatusConflict || r.code() != "stop-unconfirmed" {
		t.Errorf("retry = %d %s, want 409 stop-unconfirmed", r.Status, r.Raw)
	}
}
