package enginetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// Process is one scripted process. It implements engine.Process and
// reports its engine.Activity; its other methods let a test drive it by
// hand.
// All methods are safe for concurrent use.
type Process struct {
	e        *Engine
	rec      *Launch // its fields are guarded by e.mu
	n        int
	req      engine.StartRequest
	script   Script
	nativeID string    // the id a successful readiness reports by default
	readyAt  time.Time // when the script resolves readiness, on the engine's clock

	readyCh  chan struct{} // closed once readiness is resolved, either way
	done     chan struct{} // closed once the process has exited
	reported chan struct{} // closed once a report-only turn's report step is over

	mu            sync.Mutex
	readyResolved bool
	readyID       string
	readyErr      error
	exited        bool
	exit          engine.ExitStatus
	stopOutcome   engine.StopOutcome
	stopCalls     int
	extra         engine.Activity
	reportErr     error
}

var _ engine.Process = (*Process)(nil)

// Actual implements engine.Process: the script's Actual.
func (p *Process) Actual() engine.Actual { return p.script.Actual }

func newProcess(e *Engine, rec *Launch, req engine.StartRequest, s Script) *Process {
	id := s.NativeID
	switch {
	case id != "":
	case req.Mode == engine.Resume:
		id = req.NativeID
	default:
		id = fmt.Sprintf("native-%d", rec.N)
	}
	return &Process{
		e: e, rec: rec, n: rec.N, req: req, script: s, nativeID: id,
		readyCh:     make(chan struct{}),
		done:        make(chan struct{}),
		reported:    make(chan struct{}),
		stopOutcome: s.stopOutcome(),
	}
}

// Ready blocks until readiness is resolved and returns the native id. Once
// it succeeded it keeps returning the same id, even after the process
// exited. Errors: engine.ErrReadyRejected; engine.ErrExitedBeforeReady
// (the process exited first: see Exit); ctx's error.
func (p *Process) Ready(ctx context.Context) (string, error) {
	select {
	case <-p.readyCh:
	default:
		select {
		case <-p.readyCh:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readyID, p.readyErr
}

// Stop returns engine.NotRunning once the process has exited. Otherwise
// it returns the script's StopOutcome (or the one SetStopOutcome set):
// engine.Stopped ends the process with Exit().Stopped set and code 0;
// engine.NotRunning ends it with the script's ExitCode/ExitErr, as if it had
// just exited on its own; engine.Timeout and engine.Failed leave it running.
// Those are returned with a nil error. With ctx already done it returns
// engine.Timeout and ctx's error and changes nothing. A confirmed stop
// before readiness makes Ready return engine.ErrExitedBeforeReady.
func (p *Process) Stop(ctx context.Context) (engine.StopOutcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopCalls++
	if p.exited {
		return engine.NotRunning, nil
	}
	if err := ctx.Err(); err != nil {
		return engine.Timeout, err
	}
	o := p.stopOutcome
	switch o {
	case engine.Stopped:
		p.endLocked(0, nil, true)
	case engine.NotRunning:
		p.endLocked(p.script.ExitCode, p.script.ExitErr, false)
	}
	return o, nil
}

// Done is closed, exactly once, when the process exits.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exit reports how the process ended, with At from the engine's clock. It
// is the zero ExitStatus until Done is closed, and stable afterwards.
func (p *Process) Exit() engine.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// Activity reports what the process is doing. Turn is true while the
// process runs a report-only turn or an EndAfterReady turn (from Start until
// it exits); the other fields are what SetActivity set. An exited process
// reports no activity.
func (p *Process) Activity() engine.Activity {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return engine.Activity{}
	}
	a := p.extra
	if p.req.Turn == transcript.ReportOnly || p.script.EndAfterReady {
		a.Turn = true
	}
	return a
}

// SetActivity sets what Activity reports besides the scripted turn (a
// running tool, queued work, wake sources...). a.Turn adds to the scripted
// turn; it cannot hide it.
func (p *Process) SetActivity(a engine.Activity) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.extra = a
}

// ReadyDue reports whether the process's readiness is due to resolve on
// its own without the engine's clock moving any further: its script
// resolves readiness (it does not hold it) and its ReadyDelay, counted
// from the start on the engine's clock, has run out, but the resolution
// may not have happened yet (ReadyResolved is still false for a moment).
// It is false once readiness is resolved and for a held readiness.
func (p *Process) ReadyDue() bool {
	if p.script.Ready == ReadyHold || p.e.clk.Now().Before(p.readyAt) {
		return false
	}
	return !p.ReadyResolved()
}

// ReadyResolved reports whether the process's readiness is resolved,
// either way (confirmed, rejected, or its process ended first).
func (p *Process) ReadyResolved() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readyResolved
}

// Release resolves a pending readiness (held, or still waiting for its
// ReadyDelay) successfully with nativeID, or with the script's native id
// when nativeID is "". It does nothing once readiness is resolved.
func (p *Process) Release(nativeID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if nativeID == "" {
		nativeID = p.nativeID
	}
	p.resolveLocked(nativeID, nil)
}

// Reject makes a pending readiness fail with engine.ErrReadyRejected, and
// the process exit as a ReadyReject script would (ExitCode/ExitErr, or code
// 1). It does nothing once readiness is resolved.
func (p *Process) Reject() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.resolveLocked("", engine.ErrReadyRejected) {
		code, err := p.script.rejectExit()
		p.endLocked(code, err, false)
	}
}

// Finish makes the process exit now with code and err. It does nothing
// once the process has exited. Before readiness, Ready then returns
// engine.ErrExitedBeforeReady.
func (p *Process) Finish(code int, err error) { p.end(code, err, false) }

// SetStopOutcome changes what the next Stop returns while the process runs;
// "" restores engine.Stopped.
func (p *Process) SetStopOutcome(o engine.StopOutcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o == "" {
		o = engine.Stopped
	}
	p.stopOutcome = o
}

// StopOutcome returns what the next Stop returns while the process runs
// (the script's, or what SetStopOutcome set last).
func (p *Process) StopOutcome() engine.StopOutcome {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopOutcome
}

// Running reports whether the process has not exited yet.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.exited
}

// Request returns the request the process was started with.
func (p *Process) Request() engine.StartRequest { return p.req }

// Script returns the script the process follows.
func (p *Process) Script() Script { return p.script }

// N returns the launch number (Launch.N) of the process.
func (p *Process) N() int { return p.n }

// StopCalls returns how many times Stop was called.
func (p *Process) StopCalls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopCalls
}

// Reported returns a channel closed once the report step of a report-only
// turn is over: Options.Submit returned, or there was nothing to submit (no
// scripted report, or the process had been stopped by then). It is never
// closed for a normal turn, nor for a turn that ended before it was ready.
func (p *Process) Reported() <-chan struct{} { return p.reported }

// ReportErr returns what the report submission returned (also in
// Launch.ReportErr); nil before Reported is closed or when nothing was
// submitted.
func (p *Process) ReportErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reportErr
}

// resolveLocked settles readiness once; it reports whether this call did.
func (p *Process) resolveLocked(id string, err error) bool {
	if p.readyResolved {
		return false
	}
	p.readyResolved, p.readyID, p.readyErr = true, id, err
	if err == nil && p.script.Reply != "" {
		// Recorded before Ready returns (lock order: Process.mu, then
		// Engine.mu), so whoever saw readiness finds the reply.
		p.e.mu.Lock()
		p.e.recordEventLocked(p.req, transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: p.script.Reply})
		p.e.mu.Unlock()
	}
	close(p.readyCh)
	return true
}

func (p *Process) end(code int, err error, stopped bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLocked(code, err, stopped)
}

// endLocked makes the process exit once: a pending readiness fails with
// engine.ErrExitedBeforeReady, Exit is fixed, Done is closed and the engine
// stops counting the process as running.
func (p *Process) endLocked(code int, err error, stopped bool) {
	if p.exited {
		return
	}
	unready := p.resolveLocked("", engine.ErrExitedBeforeReady)
	p.exited = true
	p.exit = engine.ExitStatus{Code: code, Err: err, Stopped: stopped, Usage: p.script.Usage, At: p.e.clk.Now()}
	if unready && code == 0 && err == nil && !stopped {
		// The first turn finished before readiness was confirmed: the
		// session exists, and the exit is the only place to learn its id.
		p.exit.NativeID = p.nativeID
	}
	close(p.done)
	p.e.noteExit(p)
}

// readyDue applies the script once its ReadyDelay has passed.
func (p *Process) readyDue() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readyResolved {
		return
	}
	switch p.script.Ready {
	case ReadyOK:
		p.resolveLocked(p.nativeID, nil)
	case ReadyReject:
		p.resolveLocked("", engine.ErrReadyRejected)
		code, err := p.script.rejectExit()
		p.endLocked(code, err, false)
	case ExitBeforeReady:
		p.endLocked(p.script.ExitCode, p.script.ExitErr, false)
	case ReadyHold:
		// Resolved by Release, Reject, Finish, Stop, CrashAll or Close.
	}
}

// run is the process's one goroutine: it waits out ReadyDelay, then plays
// the part of the script that follows readiness. Every wait ends when the
// process exits, which Close forces.
func (p *Process) run(timer clock.Timer) {
	defer p.e.wg.Done()
	if timer != nil {
		select {
		case <-timer.C():
			p.readyDue()
		case <-p.readyCh: // released, rejected or ended early
		}
		timer.Stop()
	}
	<-p.readyCh
	p.mu.Lock()
	ok := p.readyErr == nil && !p.exited
	p.mu.Unlock()
	if !ok {
		return
	}
	switch {
	case p.req.Turn == transcript.ReportOnly:
		p.report()
		close(p.reported)
		if !p.script.Hang {
			p.end(p.script.ExitCode, p.script.ExitErr, false)
		}
	case p.script.EndAfterReady:
		p.end(p.script.ExitCode, p.script.ExitErr, false)
	}
}

// report submits the scripted report, unless there is none to submit or the
// process was stopped in the meantime.
func (p *Process) report() {
	if p.script.Report == "" || p.script.ReportToken == NoReport || !p.Running() {
		return
	}
	cred := *p.req.Report
	if p.script.ReportToken == WrongToken {
		cred.Token = baton.NewToken()
	}
	err := error(ErrNoSubmit)
	if p.e.opts.Submit != nil {
		err = p.e.opts.Submit(p.e.ctx, cred, p.script.Report)
	}
	p.mu.Lock()
	p.reportErr = err
	p.mu.Unlock()
	p.e.noteReport(p.rec, err)
}
