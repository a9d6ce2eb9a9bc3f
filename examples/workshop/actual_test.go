package main

import (
	"net/http"
	"testing"
)

// TestSessionsShowWhatRan: a session's JSON names the model its engine
// reported it really ran and its version, beside the configured model
// (the demo's demo-latest alias runs demo-2 and says so).
func TestSessionsShowWhatRan(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	r := p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "alias", "engine": "demo", "model": modelLatest})
	ws := str(r.Body, "workspace", "id")
	r = p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": "Fix the parser."})
	if got := []string{str(r.Body, "session", "model"), str(r.Body, "session", "actualModel"), str(r.Body, "session", "engineVersion")}; got[0] != modelLatest || got[1] != modelLatestRuns || got[2] != demoVersion {
		t.Errorf("started session = %s; want model %s, actualModel %s, engineVersion %s", r.Raw, modelLatest, modelLatestRuns, demoVersion)
	}
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
	s := r.Body["sessions"].([]any)[0].(map[string]any)
	if s["model"] != modelLatest || s["actualModel"] != modelLatestRuns || s["engineVersion"] != demoVersion {
		t.Errorf("listed session = %v", s)
	}
}
