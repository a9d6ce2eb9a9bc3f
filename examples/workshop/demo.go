package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/transcript"
)

// Demo model names: each scripts one path of the SDK (any other name is an
// ordinary agent).
const (
	modelFailReady = "fail-ready" // the process starts, readiness is rejected (a transfer's first attempt only)
	modelExitEarly = "exit-early" // the first turn ends cleanly before readiness
	modelNoReport  = "no-report"  // a report-only turn ends without a report
	modelHangStop  = "hang-stop"  // Stop is never confirmed (timeout)
	modelSlowReady = "slow-ready" // readiness takes DemoTimings.SlowReady
	// modelLatest is an alias: the agent runs modelLatestRuns and says so,
	// as Claude Code may send its API another model than the one asked for.
	modelLatest     = "demo-latest"
	modelLatestRuns = "demo-2"
	// modelNoWindow reports its context usage without the window's size,
	// as an engine that cannot tell.
	modelNoWindow = "no-window"
	// demoVersion is the version every demo process reports.
	demoVersion = "1.0-demo"
)

// DemoTimings are the demo engine's delays.
type DemoTimings struct {
	// Ready is how long an ordinary start takes to become ready.
	Ready time.Duration
	// Turn is how long an ordinary turn runs after readiness before it
	// ends by itself (the agent answered).
	Turn time.Duration
	// Report is how long a report-only turn takes before it submits.
	Report time.Duration
	// SlowReady is the readiness delay of the slow-ready model.
	SlowReady time.Duration
}

// The context usage a demo session reports: demoTurnTokens more after each
// of its ordinary turns, in a window of demoWindow tokens.
const (
	demoTurnTokens = 20000
	demoWindow     = 200000
)

// defaultDemoTimings are the -demo-* flags' defaults.
var defaultDemoTimings = DemoTimings{Ready: 20 * time.Millisecond, Turn: 200 * time.Millisecond, Report: 20 * time.Millisecond, SlowReady: 2 * time.Second}

// demoEngine is an engine.Engine with no LLM behind it: enginetest's
// scripted processes, chosen by model name, whose ordinary turns end after
// a while and whose report-only turns submit a Markdown report through
// submit (the coordinator's SubmitReport, with the attempt's token).
type demoEngine struct {
	inner  *enginetest.Engine
	t      DemoTimings
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	turns map[baton.SessionID]int64 // ordinary turns started, by session
}

var (
	_ engine.Engine    = (*demoEngine)(nil)
	_ engine.Validator = (*demoEngine)(nil)
)

func newDemoEngine(t DemoTimings, submit func(ctx context.Context, cred engine.ReportCredentials, text string) error) *demoEngine {
	d := &demoEngine{t: t, turns: map[baton.SessionID]int64{}}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.inner = enginetest.New(enginetest.Options{ScriptFor: d.script, Submit: submit, Validate: validateDemo})
	return d
}

func validateDemo(cfg baton.EngineConfig) error {
	if strings.TrimSpace(cfg.Model) == "" {
		return baton.Errorf(engine.ErrUnsupportedConfig, "demo: a model name is required")
	}
	return nil
}

// Validate implements engine.Validator: every model name is accepted.
func (d *demoEngine) Validate(cfg baton.EngineConfig) error { return d.inner.Validate(cfg) }

func (d *demoEngine) script(req engine.StartRequest) (enginetest.Script, bool) {
	s := enginetest.Script{ReadyDelay: d.t.Ready, Actual: engine.Actual{Model: strings.TrimSpace(req.Config.Model), Version: demoVersion}}
	report := req.Turn == transcript.ReportOnly
	if report {
		s.ReadyDelay = d.t.Report
		s.Report, s.ReportToken = demoReport(req), enginetest.RightToken
	} else {
		d.mu.Lock()
		d.turns[req.Session]++
		s.Usage = engine.Usage{Tokens: demoTurnTokens * d.turns[req.Session], Window: demoWindow}
		d.mu.Unlock()
	}
	switch strings.TrimSpace(req.Config.Model) {
	case modelFailReady:
		// Rejected outside transfers and on a transfer's first attempt,
		// so that a retry shows the way out.
		if req.Attempt <= 1 {
			s.Ready = enginetest.ReadyReject
		}
	case modelExitEarly:
		s.Ready = enginetest.ExitBeforeReady
	case modelNoReport:
		s.Report, s.ReportToken = "", enginetest.NoReport
	case modelHangStop:
		s.StopOutcome, s.Hang = engine.Timeout, true
	case modelSlowReady:
		s.ReadyDelay = d.t.SlowReady
	case modelLatest:
		s.Actual.Model = modelLatestRuns
	case modelNoWindow:
		s.Usage.Window = 0
	}
	return s, true
}

// Start launches a scripted process; an ordinary turn ends by itself
// DemoTimings.Turn after readiness (hang-stop's never does).
func (d *demoEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	p, err := d.inner.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	proc := p.(*enginetest.Process)
	if req.Turn != transcript.ReportOnly && strings.TrimSpace(req.Config.Model) != modelHangStop {
		d.wg.Add(1)
		go d.endTurn(proc)
	}
	return proc, nil
}

// endTurn ends an ordinary turn once it has run for DemoTimings.Turn.
func (d *demoEngine) endTurn(p *enginetest.Process) {
	defer d.wg.Done()
	if _, err := p.Ready(d.ctx); err != nil {
		return // rejected, ended before readiness, or the engine closed
	}
	t := time.NewTimer(d.t.Turn)
	defer t.Stop()
	select {
	case <-t.C:
		p.Finish(0, nil)
	case <-p.Done():
	case <-d.ctx.Done():
	}
}

// Close ends every process and waits for the engine's goroutines.
func (d *demoEngine) Close() {
	d.cancel()
	d.inner.Close()
	d.wg.Wait()
}

// demoReport is the Markdown a demo agent writes in its report-only turn.
func demoReport(req engine.StartRequest) string {
	return fmt.Sprintf(`# Handoff report

## Objective
Continue the work of workspace %s (session %s, %s/%s).

## Decisions
- Kept the scope small; the demo engine has no LLM behind it.

## Verified progress
- Attempt %d of handoff %s reached its report-only turn.

## Failed approaches
- None recorded.

## Open questions
- None.

## Next action
Pick up where the previous session stopped.
`, req.Workspace, req.Session, req.Config.Engine, req.Config.Model, req.Report.Attempt, req.Report.Handoff)
}
