package enginetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/transcript"
)

// bound is how long a test waits for something that should happen promptly
// before it fails; it never delays a passing test.
const bound = 5 * time.Second

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newEngine returns an engine on a fake clock, closed when the test ends.
func newEngine(t *testing.T, opts enginetest.Options) (*enginetest.Engine, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(epoch)
	if opts.Clock == nil {
		opts.Clock = clk
	}
	e := enginetest.New(opts)
	t.Cleanup(e.Close)
	return e, clk
}

func req(ws baton.WorkspaceID) engine.StartRequest {
	return engine.StartRequest{Workspace: ws, Config: baton.EngineConfig{Engine: "demo"}, Mode: engine.Fresh, Turn: transcript.Normal}
}

func reportReq(ws baton.WorkspaceID) (engine.StartRequest, engine.ReportCredentials) {
	cred := engine.ReportCredentials{Workspace: ws, Handoff: "h1", Attempt: 2, Token: baton.NewToken()}
	r := req(ws)
	r.Mode, r.NativeID, r.Turn, r.Report, r.Attempt = engine.Resume, "src-native", transcript.ReportOnly, &cred, 2
	return r, cred
}

func start(t *testing.T, e *enginetest.Engine, r engine.StartRequest) *enginetest.Process {
	t.Helper()
	p, err := e.Start(context.Background(), r)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return p.(*enginetest.Process)
}

func ctxBound(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	t.Cleanup(cancel)
	return ctx
}

// cancelled is a context that is already done: Ready with it answers at
// once, telling whether readiness is resolved without waiting.
func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(bound):
		t.Fatalf("%s: not closed within %v", what, bound)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

type readyResult struct {
	ID  string
	Err error
}

func ready(t *testing.T, p engine.Process) readyResult {
	t.Helper()
	id, err := p.Ready(ctxBound(t))
	return readyResult{id, err}
}
