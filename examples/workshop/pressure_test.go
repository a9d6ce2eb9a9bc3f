package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPressurePolicy: a workspace's context-pressure policy is read and
// set over GET and PUT /api/workspaces/{ws}/pressure, checked (400
// invalid-request, 404 not-found) and shown on the workspace's JSON; a
// workspace created without one gets -pressure-threshold's. With the demo
// engine (20,000 more tokens a turn, of 200,000) at 0.15, the first turn
// hands nothing over and the second hands over by itself once it has
// settled, once, and the handoff says why.
func TestPressurePolicy(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "", "-pressure-threshold", "0.5")
	ws := p.workspace("demo-1")
	r := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/pressure", nil)
	if d := cmp.Diff(map[string]any{"threshold": 0.5, "report": false}, r.Body["pressure"]); d != "" {
		t.Errorf("a new workspace's policy, -pressure-threshold 0.5 (-want +got):\n%s", d)
	}
	r = p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "own", "engine": "demo", "model": "demo-1",
		"pressure": map[string]any{"threshold": 0.9, "target": map[string]any{"engine": "demo", "model": "demo-2"}, "report": true}})
	want := map[string]any{"threshold": 0.9, "target": map[string]any{"engine": "demo", "model": "demo-2"}, "report": true}
	if d := cmp.Diff(want, r.Body["workspace"].(map[string]any)["pressure"]); d != "" {
		t.Errorf("a workspace created with a policy (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		name string
		body any
	}{
		{"threshold over 1", map[string]any{"threshold": 1.5}},
		{"negative threshold", map[string]any{"threshold": -0.1}},
		{"unknown target engine", map[string]any{"threshold": 0.8, "target": map[string]any{"engine": "nope", "model": "m"}}},
		{"target without a model", map[string]any{"threshold": 0.8, "target": map[string]any{"engine": "demo"}}},
		{"threshold as text", map[string]any{"threshold": "80%"}},
		{"unknown field", map[string]any{"threshold": 0.8, "window": 1000}},
		{"empty body", ""},
	} {
		if r := p.do("PUT", "/api/workspaces/"+ws+"/pressure", c.body); r.Status != http.StatusBadRequest || r.code() != "invalid-request" {
			t.Errorf("set pressure, %s: %d %s, want 400 invalid-request", c.name, r.Status, r.Raw)
		}
	}
	if r := p.do("POST", "/api/workspaces", map[string]any{"name": "x", "engine": "demo", "model": "demo-1", "pressure": map[string]any{"threshold": 2}}); r.Status != http.StatusBadRequest || r.code() != "invalid-request" {
		t.Errorf("create with a threshold of 2: %d %s, want 400 invalid-request", r.Status, r.Raw)
	}
	for _, m := range []string{"GET", "PUT"} {
		if r := p.do(m, "/api/workspaces/ws-missing/pressure", map[string]any{"threshold": 0.5}); r.Status != http.StatusNotFound || r.code() != "not-found" {
			t.Errorf("%s pressure of no workspace: %d %s, want 404 not-found", m, r.Status, r.Raw)
		}
	}

	r = p.must(http.StatusOK, "PUT", "/api/workspaces/"+ws+"/pressure", map[string]any{"threshold": 0.15})
	if d := cmp.Diff(map[string]any{"threshold": 0.15, "report": false}, r.Body["workspace"].(map[string]any)["pressure"]); d != "" {
		t.Errorf("the policy set (-want +got):\n%s", d)
	}
	if got := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil).Body["workspace"].(map[string]any)["pressure"]; cmp.Diff(map[string]any{"threshold": 0.15, "report": false}, got) != "" {
		t.Errorf("the workspace's JSON shows the policy %v", got)
	}
	src := p.session(ws)
	p.waitIdle(ws)
	time.Sleep(200 * time.Millisecond) // a transfer would have been created by now
	if hs := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs", nil).Body["handoffs"].([]any); len(hs) != 0 {
		t.Fatalf("a turn at 10%% of the window started a transfer: %v", hs)
	}
	if got := p.session(ws); got != src {
		t.Fatalf("the second turn ran in %s, want the source %s resumed", got, src)
	}
	h := pressureHandoff(p, ws, src, 40000, 200000, 0.15)
	if h["generateSummary"] == true || cmp.Diff(map[string]any{"engine": "demo", "model": "demo-1"}, h["targetConfig"]) != "" {
		t.Errorf("the handoff = %v, want no report and the source's configuration", h)
	}
}

// pressureHandoff waits for the one context-pressure transfer of ws to
// complete and checks it: from session src, after src's turn settled,
// with a reason of tokens / window ≥ threshold; it returns it.
func pressureHandoff(p *proc, ws, src string, tokens, window int64, threshold float64) map[string]any {
	p.t.Helper()
	deadline := p.deadline()
	var hs []any
	for len(hs) == 0 {
		hs = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs", nil).Body["handoffs"].([]any)
		if time.Now().After(deadline) {
			p.t.Fatalf("no transfer started by itself:\n%s", p.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	h := p.waitHandoff(ws, str(hs[0].(map[string]any), "id"), "completed", "failed")
	if h["state"] != "completed" {
		p.t.Fatalf("the context-pressure transfer = %v\n%s", h, p.logs.String())
	}
	want := map[string]any{"trigger": "context-pressure", "tokens": float64(tokens), "window": float64(window), "threshold": threshold}
	if d := cmp.Diff(want, h["reason"]); d != "" {
		p.t.Errorf("the handoff's reason (-want +got):\n%s", d)
	}
	if str(h, "sourceSessionId") != src || !strings.HasPrefix(str(h, "requestId"), "context-pressure:"+src+":") {
		p.t.Errorf("the handoff = %v, want it from %s with a request id of context-pressure:%s:<launch>", h, src, src)
	}
	// Never mid-turn: the source's row was ended before the transfer was
	// created.
	var ended time.Time
	for _, s := range p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil).Body["sessions"].([]any) {
		if m := s.(map[string]any); m["id"] == src {
			ended, _ = time.Parse(time.RFC3339Nano, str(m, "endedAt"))
		}
	}
	created, _ := time.Parse(time.RFC3339Nano, str(h, "createdAt"))
	if ended.IsZero() || created.Before(ended) {
		p.t.Errorf("the transfer was created at %v, the source's turn ended at %v: want it created after", created, ended)
	}
	// Once: the target's turns are under the threshold, and the source's
	// settle is not made due again.
	time.Sleep(300 * time.Millisecond)
	if hs = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs", nil).Body["handoffs"].([]any); len(hs) != 1 {
		p.t.Errorf("%d transfers, want the one: %v", len(hs), hs)
	}
	return h
}
