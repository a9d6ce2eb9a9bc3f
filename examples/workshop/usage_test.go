package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSessionsShowUsage: the session change that records a turn's end
// (on the workspace's event stream, from the store's change feed)
// carries the context usage the turn reported, and so does the session's
// JSON: the demo's grows by demoTurnTokens a turn, in a window of
// demoWindow (no-window's has no window), with the turn's launch. A
// session whose first turn has not ended has none.
func TestSessionsShowUsage(t *testing.T) {
	t.Parallel()
	p := startBinary(t, "")
	for _, tc := range []struct {
		model  string
		window int64
	}{{"demo-1", demoWindow}, {modelNoWindow, 0}} {
		ws := p.workspace(tc.model)
		ctx, cancel := context.WithDeadline(context.Background(), p.deadline())
		events := p.subscribe(ctx, ws, "")
		r := p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": "Fix the parser."})
		if _, ok := r.Body["session"].(map[string]any)["usage"]; ok {
			t.Errorf("%s: a running first turn already shows usage: %s", tc.model, r.Raw)
		}
		var ended sessionJSON
		for ev := range events {
			var d struct {
				Session sessionJSON `json:"session"`
			}
			if ev.Event == "session" && json.Unmarshal([]byte(ev.Data), &d) == nil && d.Session.Status == "ended" {
				ended = d.Session
				break
			}
		}
		cancel()
		u := ended.Usage
		if u == nil || u.Tokens != demoTurnTokens || u.Window != tc.window || u.Launch == "" {
			t.Fatalf("%s: the ended session's event = %+v; want %d tokens in a window of %d, with its launch", tc.model, ended, demoTurnTokens, tc.window)
		}
		r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
		got := r.Body["sessions"].([]any)[0].(map[string]any)["usage"]
		want := map[string]any{"tokens": float64(u.Tokens), "window": float64(u.Window), "launchId": string(u.Launch)}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: listed session's usage (-want +got):\n%s", tc.model, d)
		}
	}
}
