package main

import (
	"net/http"
	"testing"
)

// What leaves the machine is the user's choice: a workspace's setting (at
// creation and later), a transfer's override, both shown on the records;
// bad values are refused as invalid requests.
func TestShareSetting(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	r := p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "x", "engine": "demo", "model": "demo-1", "share": "report"})
	ws := str(r.Body, "workspace", "id")
	if got := str(r.Body, "workspace", "share"); got != "report" {
		t.Fatalf("created workspace share = %q; want report", got)
	}
	if got := str(p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "y", "engine": "demo", "model": "demo-1"}).Body, "workspace", "share"); got != "conversation" {
		t.Errorf("default workspace share = %q; want conversation", got)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/workspaces", map[string]any{"name": "z", "engine": "demo", "model": "demo-1", "share": "everything"}},
		{"PUT", "/api/workspaces/" + ws + "/share", map[string]any{"share": "all"}},
		{"POST", "/api/workspaces/" + ws + "/session-handoffs", map[string]any{"requestId": "bad", "generateSummary": false,
			"target": map[string]any{"engine": "demo", "model": "demo-2"}, "share": "secrets"}},
	} {
		if r := p.do(c.method, c.path, c.body); r.Status != http.StatusBadRequest || r.code() != "invalid-request" {
			t.Errorf("%s %s with a bad share: %d %s; want 400 invalid-request", c.method, c.path, r.Status, r.Raw)
		}
	}
	if got := str(p.must(http.StatusOK, "PUT", "/api/workspaces/"+ws+"/share", map[string]any{"share": "none"}).Body, "workspace", "share"); got != "none" {
		t.Fatalf("share after PUT = %q; want none", got)
	}
	src := p.session(ws)
	body := handoffReq("r1", src, "demo-2", false)
	id := p.handoff(ws, "r1", src, "demo-2", false)
	if h := p.waitHandoff(ws, id, "completed"); h["share"] != "none" {
		t.Errorf("handoff share = %v; want the workspace's, none", h["share"])
	}
	cur := str(p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil).Body, "currentSession", "id")
	body = handoffReq("r2", cur, "demo-1", false)
	body["share"] = "conversation"
	r = p.must(http.StatusAccepted, "POST", "/api/workspaces/"+ws+"/session-handoffs", body)
	if h := p.waitHandoff(ws, str(r.Body, "handoff", "id"), "completed"); h["share"] != "conversation" {
		t.Errorf("handoff share = %v; want the request's, conversation", h["share"])
	}
	// The same request id with another choice is another request.
	body["share"] = "report"
	if r := p.do("POST", "/api/workspaces/"+ws+"/session-handoffs", body); r.Status != http.StatusConflict {
		t.Errorf("replay with another share: %d %s; want 409", r.Status, r.Raw)
	}
}
