package enginetest

import (
	"context"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// Errors of the scripted engine. Match with errors.Is.
var (
	// ErrClosed: Start after Close; also the Exit().Err of every process
	// Close ended.
	ErrClosed = baton.NewError(baton.ErrUnavailable, "enginetest: engine closed")
	// ErrCrashed is the Exit().Err of every process CrashAll ended.
	ErrCrashed = baton.NewError(baton.ErrUnavailable, "enginetest: process crashed")
	// ErrBadRequest: Start got a malformed request (unknown Mode or Turn, a
	// resume without a native id, a report-only turn without credentials).
	// It matches baton.ErrInvalid.
	ErrBadRequest = baton.NewError(baton.ErrInvalid, "enginetest: invalid start request")
	// ErrBadScript: the chosen Script has an unknown Ready, ReportToken or
	// StopOutcome, or a negative ReadyDelay. It matches baton.ErrInvalid.
	ErrBadScript = baton.NewError(baton.ErrInvalid, "enginetest: invalid script")
	// ErrNoSubmit is recorded as the ReportErr of a turn that had a report
	// to submit while Options.Submit is nil.
	ErrNoSubmit = baton.NewError(baton.ErrUnsupported, "enginetest: no Submit hook")
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// Clock times ReadyDelay and stamps Exit().At. Default clock.Real{}.
	Clock clock.Clock
	// Default is the script of a start that neither ScriptFor nor the Push
	// queue provides one for.
	Default Script
	// ScriptFor, when set, is consulted first; ok=false falls through to the
	// queue. It may choose by req.Config.Model, for instance. Concurrent
	// Starts call it concurrently.
	ScriptFor func(req engine.StartRequest) (s Script, ok bool)
	// Submit receives the reports of report-only turns (in baton, the
	// handoff coordinator's SubmitReport). Its ctx is cancelled by Close.
	Submit func(ctx context.Context, cred engine.ReportCredentials, text string) error
	// Validate implements engine.Validator and also gates Start. Default:
	// accept every configuration.
	Validate func(cfg baton.EngineConfig) error
}

// Launch records one Start call.
type Launch struct {
	// N numbers Start calls from 1, in call order.
	N   int
	Req engine.StartRequest
	// Script is the script chosen for the start (zero when Start failed
	// before choosing one).
	Script Script
	// Proc is the launched process; nil when Failed.
	Proc *Process
	// Failed reports that Start returned an error and launched nothing.
	Failed bool
	// Err is the error Start returned when Failed.
	Err error
	// ReportErr is what Options.Submit returned for this launch's report
	// (or ErrNoSubmit), once the report step has run.
	ReportErr error
	// Began and Ended bound the process's lifetime on the engine's event
	// counter (one tick per start and per exit, across every workspace):
	// two processes of a workspace ran at the same moment exactly when
	// their [Began, Ended) intervals overlap. Ended is 0 while the process
	// runs (and for a failed start).
	Began, Ended int64
}

// Engine is a scripted engine.Engine and engine.Validator. It is safe for
// concurrent use. Call Close when done.
type Engine struct {
	opts   Options
	clk    clock.Clock
	ctx    context.Context // cancelled by Close; handed to Options.Submit
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per launched process's goroutine

	mu         sync.Mutex
	closed     bool
	queue      []Script
	launches   []*Launch
	launched   chan struct{} // closed and replaced whenever a launch is recorded
	running    map[baton.WorkspaceID]int
	maxRunning map[baton.WorkspaceID]int
	live       map[*Process]struct{}
	talk       map[baton.SessionID][]transcript.Event // the transcripts
	tick       int64                                  // the lifetime event counter (Launch.Began, Ended)
}

var (
	_ engine.Engine      = (*Engine)(nil)
	_ engine.Validator   = (*Engine)(nil)
	_ engine.Reaper      = (*Engine)(nil)
	_ engine.Transcriber = (*Engine)(nil)
)

// New returns an engine configured by opts.
func New(opts Options) *Engine {
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Engine{
		opts:       opts,
		clk:        clk,
		ctx:        ctx,
		cancel:     cancel,
		launched:   make(chan struct{}),
		running:    map[baton.WorkspaceID]int{},
		maxRunning: map[baton.WorkspaceID]int{},
		live:       map[*Process]struct{}{},
		talk:       map[baton.SessionID][]transcript.Event{},
	}
}

// Push queues scripts for the next starts, first in first out. A start
// that Options.ScriptFor claims does not consume one.
func (e *Engine) Push(s ...Script) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queue = append(e.queue, s...)
}

// Validate implements engine.Validator with Options.Validate; without it
// every configuration is accepted. It returns what that hook returns.
func (e *Engine) Validate(cfg baton.EngineConfig) error {
	if e.opts.Validate == nil {
		return nil
	}
	return e.opts.Validate(cfg)
}

// Start launches a process that follows the chosen script and records the
// call in Launches, whether or not it succeeds. Errors: ctx's error;
// ErrBadRequest; whatever Options.Validate returns for req.Config;
// ErrClosed; ErrBadScript; the script's StartErr, returned as is. A failed
// Start launches nothing.
func (e *Engine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, e.fail(req, Script{}, err)
	}
	if err := checkRequest(req); err != nil {
		return nil, e.fail(req, Script{}, err)
	}
	if err := e.Validate(req.Config); err != nil {
		return nil, e.fail(req, Script{}, err)
	}
	var script Script
	chosen := false
	if e.opts.ScriptFor != nil {
		script, chosen = e.opts.ScriptFor(req)
	}

	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, e.fail(req, script, ErrClosed)
	}
	if !chosen {
		if len(e.queue) > 0 {
			script = e.queue[0]
			e.queue = e.queue[1:]
		} else {
			script = e.opts.Default
		}
	}
	err := checkScript(script)
	if err == nil {
		err = script.StartErr
	}
	if err != nil {
		e.recordLocked(&Launch{Req: req, Script: script, Failed: true, Err: err})
		e.mu.Unlock()
		return nil, err
	}
	// Arm the readiness timer before the launch is recorded (and before
	// Start returns): whoever sees the launch, through Launches or
	// WaitLaunches, may advance a fake clock at once.
	var timer clock.Timer
	if script.ReadyDelay > 0 {
		timer = e.clk.NewTimer(script.ReadyDelay)
	}
	e.tick++
	rec := &Launch{Req: req, Script: script, Began: e.tick}
	e.recordLocked(rec)
	p := newProcess(e, rec, req, script)
	p.readyAt = e.clk.Now().Add(script.ReadyDelay)
	rec.Proc = p
	e.live[p] = struct{}{}
	e.recordEventLocked(req, transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: req.Prompt})
	e.running[req.Workspace]++
	e.maxRunning[req.Workspace] = max(e.maxRunning[req.Workspace], e.running[req.Workspace])
	e.wg.Add(1)
	e.mu.Unlock()

	if timer == nil {
		p.readyDue()
	}
	go p.run(timer)
	return p, nil
}

func (e *Engine) fail(req engine.StartRequest, s Script, err error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.recordLocked(&Launch{Req: req, Script: s, Failed: true, Err: err})
	return err
}

func (e *Engine) recordLocked(l *Launch) {
	l.N = len(e.launches) + 1
	e.launches = append(e.launches, l)
	close(e.launched)
	e.launched = make(chan struct{})
}

// Launches returns a copy of every Start call so far, in call order.
func (e *Engine) Launches() []Launch {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Launch, len(e.launches))
	for i, l := range e.launches {
		out[i] = *l
	}
	return out
}

// WaitLaunches blocks until at least n Start calls are recorded and returns
// them as Launches does; ctx's error otherwise.
func (e *Engine) WaitLaunches(ctx context.Context, n int) ([]Launch, error) {
	for {
		e.mu.Lock()
		if len(e.launches) >= n {
			e.mu.Unlock()
			return e.Launches(), nil
		}
		ch := e.launched
		e.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Running returns how many processes currently run in ws. A process whose
// Stop returned Timeout or Failed still counts.
func (e *Engine) Running(ws baton.WorkspaceID) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running[ws]
}

// MaxRunning returns the most processes ever running at once in ws. baton's
// invariant is that it never exceeds 1.
func (e *Engine) MaxRunning(ws baton.WorkspaceID) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.maxRunning[ws]
}

// CrashAll makes every running process exit at once with code -1 and
// ErrCrashed, as if the host died. A pending Ready then returns
// engine.ErrExitedBeforeReady.
func (e *Engine) CrashAll() {
	for _, p := range e.liveProcs() {
		p.end(-1, ErrCrashed, false)
	}
}

// Close ends every running process (code -1, ErrClosed), cancels the ctx
// given to Options.Submit, and waits until every goroutine of the engine has
// returned. Later Starts fail with ErrClosed. Close is idempotent.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	// End the processes before cancelling the Submit context: a report
	// turn woken by the cancellation would otherwise end itself cleanly
	// first.
	for _, p := range e.liveProcs() {
		p.end(-1, ErrClosed, false)
	}
	e.cancel()
	e.wg.Wait()
}

func (e *Engine) liveProcs() []*Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Process, 0, len(e.live))
	for p := range e.live {
		out = append(out, p)
	}
	return out
}

// noteExit is called exactly once per process, with p.mu held (lock order:
// Process.mu, then Engine.mu).
func (e *Engine) noteExit(p *Process) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.live, p)
	e.running[p.req.Workspace]--
	e.tick++
	p.rec.Ended = e.tick
}

// Overlap names two processes of one workspace that ran at the same moment.
type Overlap struct {
	Workspace baton.WorkspaceID
	// First and Second are the launch numbers (Launch.N), First began first.
	First, Second int
}

// Overlaps returns every pair of processes of the same workspace whose
// lifetimes overlapped, in order of the later one's start. baton's
// invariant is that there is none.
func (e *Engine) Overlaps() []Overlap {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Overlap
	for j, b := range e.launches {
		if b.Proc == nil {
			continue
		}
		for _, a := range e.launches[:j] {
			if a.Proc == nil || a.Req.Workspace != b.Req.Workspace {
				continue
			}
			if a.Ended == 0 || a.Ended > b.Began {
				out = append(out, Overlap{Workspace: b.Req.Workspace, First: a.N, Second: b.N})
			}
		}
	}
	return out
}

// ReapLaunch implements engine.Reaper: it ends every running process whose
// request carries launch id, as a confirmed stop would (Exit().Stopped set),
// whichever Stop outcome their script holds: a reaper kills the whole tree.
// It returns engine.Stopped when it ended one, engine.NotRunning when none
// ran (an unknown id included), and ctx's error (with engine.Timeout) when
// ctx is done.
func (e *Engine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	if err := ctx.Err(); err != nil {
		return engine.Timeout, err
	}
	out := engine.NotRunning
	for _, p := range e.liveProcs() {
		if id != "" && p.req.LaunchID == id && p.Running() {
			p.end(0, nil, true)
			out = engine.Stopped
		}
	}
	return out, nil
}

func (e *Engine) noteReport(rec *Launch, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec.ReportErr = err
}

func checkRequest(req engine.StartRequest) error {
	switch req.Mode {
	case "", engine.Fresh:
	case engine.Resume:
		if req.NativeID == "" {
			return baton.Errorf(ErrBadRequest, "resume without a native id")
		}
	default:
		return baton.Errorf(ErrBadRequest, "unknown mode %q", req.Mode)
	}
	switch req.Turn {
	case "", transcript.Normal:
	case transcript.ReportOnly:
		if req.Report == nil {
			return baton.Errorf(ErrBadRequest, "report-only turn without report credentials")
		}
	default:
		return baton.Errorf(ErrBadRequest, "unknown turn %q", req.Turn)
	}
	return nil
}

func checkScript(s Script) error {
	switch {
	case s.Ready < ReadyOK || s.Ready > ExitBeforeReady:
		return baton.Errorf(ErrBadScript, "unknown Ready %d", int(s.Ready))
	case s.ReportToken < NoReport || s.ReportToken > WrongToken:
		return baton.Errorf(ErrBadScript, "unknown ReportToken %d", int(s.ReportToken))
	case s.ReadyDelay < 0:
		return baton.Errorf(ErrBadScript, "negative ReadyDelay %v", s.ReadyDelay)
	}
	switch s.StopOutcome {
	case "", engine.Stopped, engine.NotRunning, engine.Timeout, engine.Failed:
		return nil
	}
	return baton.Errorf(ErrBadScript, "unknown StopOutcome %q", s.StopOutcome)
}
