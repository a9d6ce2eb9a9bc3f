package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/transcript"
)

// TestReportRouteWithTheToken drives the report route with the attempt's
// real token, which only the engine holds: the server runs in this process
// (memory store, real HTTP on loopback) so that the test can read the
// token the demo engine received. The first report is accepted, the same
// text again too (a retry), a different one is refused.
func TestReportRouteWithTheToken(t *testing.T) {
	t.Parallel()
	cfg := config{Store: "memory", Heartbeat: time.Minute, Grace: time.Second,
		Demo: DemoTimings{Ready: time.Millisecond, Report: time.Hour, Turn: time.Hour, SlowReady: time.Second}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MCPAddr = ln.Addr().String()
	s, err := newServer(context.Background(), cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	s.hosts = allowedHosts("127.0.0.1", nil)
	hs := &http.Server{Handler: s.routes()}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() {
		s.stopBackground()
		_ = hs.Close()
		if err := s.shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	p := &proc{t: t, base: "http://" + ln.Addr().String(), addr: ln.Addr().String()}

	ws := p.workspace("demo-1")
	src := p.session(ws)
	hid := p.handoff(ws, "tok-1", src, "demo-2", true)
	p.waitHandoff(ws, hid, "generating")
	// "generating" is committed (the token armed) before the driver
	// launches the report-only turn: wait for that launch.
	token := reportToken(t, s.demo.inner, hid)
	path := "/api/workspaces/" + ws + "/session-handoffs/" + hid + "/report"
	for _, c := range []struct {
		name   string
		token  string
		report string
		status int
		code   string
	}{
		{"over-long with the right token", token, strings.Repeat("x", 24001), 400, "invalid-request"},
		{"wrong token", "nope", "# A", 409, "generation-inactive"},
		{"first report", token, "# A", 200, ""},
		{"same text again", token, "# A", 200, ""},
		{"another text", token, "# B", 409, "report-conflict"},
	} {
		r := p.do("POST", path, map[string]any{"token": c.token, "report": c.report})
		if r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Raw, c.status, c.code)
		}
	}
	if strings.Contains(string(p.do("GET", "/api/workspaces/"+ws+"/session-handoffs/"+hid, nil).Raw), token) {
		t.Error("the handoff JSON contains the token")
	}
}

// reportToken waits (bounded) until e records the report-only launch of
// handoff hid and returns the token it was given.
func reportToken(t *testing.T, e *enginetest.Engine, hid string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for n := 1; ; {
		ls, err := e.WaitLaunches(ctx, n)
		if err != nil {
			t.Fatalf("no report-only launch of %s recorded: %v", hid, err)
		}
		for _, l := range ls {
			if l.Req.Turn == transcript.ReportOnly && l.Req.Report != nil && string(l.Req.Report.Handoff) == hid {
				return l.Req.Report.Token.Reveal()
			}
		}
		n = len(ls) + 1
	}
}
