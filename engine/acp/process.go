package acp

import (
	"context"
	"errors"
	"io"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"go.uber.org/zap"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// turnEndGrace is how long an agent whose turn ended may take to exit at
// the end of its input before it gets SIGTERM.
const turnEndGrace = 250 * time.Millisecond

// process is one launch: one agent process, one session, one turn. Its
// proc.Child keeps readiness, the exit, Done, Exit, Activity (a turn while
// the agent runs, a tool while one of its tool calls runs) and Actual (the
// agent's version, its initialize answer's agentInfo, and the model its
// session reported, or the configuration's model once the engine set it).
// Exit's Code is the turn's, not the agent process's: 0 when
// session/prompt answered with a stop reason that ends a turn (end_turn,
// max_tokens, max_turn_requests) and no stop was asked, whatever signal
// then ended the agent; otherwise the agent's exit code (1 when it exited
// 0, -1 when a signal ended it), and Err says why unless Stop asked. It
// implements engine.Process and reports its engine.Activity.
type process struct {
	proc.Child
	e      *Engine
	req    engine.StartRequest
	dir    string
	launch Launch
	w      *tlog.Writer

	stderrDone chan struct{}
	ctx        context.Context // the conversation's; cancelled once the agent is gone
	cancel     context.CancelFunc
	convDone   chan struct{} // closed when the conversation ends (or never began)

	// Guarded by Child.Mu.
	conn    *sdk.ClientSideConnection // set once the turn's prompt is sent: its updates count from then
	turnOK  bool                      // session/prompt answered with a stop reason that ends a turn
	turnErr string                    // why the conversation failed, "" when it did not
}

var _ interface {
	engine.Process
	Activity() engine.Activity
} = (*process)(nil)

// spawn opens the session's transcript and starts the agent (or the held
// shell); called with e.reg.Mu held.
func (e *Engine) spawn(req engine.StartRequest, dir string, l Launch) (*process, error) {
	p := &process{e: e, req: req, dir: dir, launch: l, stderrDone: make(chan struct{}), convDone: make(chan struct{})}
	var err error
	if req.Session != "" {
		if p.w, err = tlog.OpenSession("acp", e.opts.DataDir, req.Session); err != nil {
			return nil, err
		}
	}
	err = p.Spawn(proc.Command{
		Engine: "acp", Name: e.opts.Name, Path: e.opts.Command, Args: e.opts.Args, Dir: dir, Env: proc.Env(e.opts.Env, req.LaunchID, l.Env),
		Launch: req.LaunchID, DeathSignal: e.opts.DeathSignal, Clock: e.opts.Clock, Stdin: true, Held: req.Admit != nil,
	})
	if err != nil {
		if p.w != nil {
			_ = p.w.Close()
		}
		return nil, err
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	e.opts.Logger.Debug("acp: spawned", zap.String("agent", e.opts.Name), zap.String("launch", string(req.LaunchID)),
		zap.Int("pid", p.PID()), zap.Bool("held", req.Admit != nil))
	p.WatchReady(&e.reg.WG, req, func() { _, _ = p.Stop(context.Background()) })
	e.reg.WG.Go(p.readStderr)
	return p, nil
}

// begin records the start in the transcript and opens the conversation: at
// the spawn, or at the release of a held start.
func (p *process) begin() {
	p.append(proc.Started(p.e.opts.Name, p.req)...)
	p.e.reg.WG.Go(p.converse)
}

func (p *process) append(evs ...transcript.Event) {
	if p.w != nil {
		p.w.Append(p.Clock().Now(), p.req.LaunchID, p.req.Turn, evs...)
	}
}

// Stop ends the launch and confirms it: session/cancel when the turn runs
// (or the end of the agent's input before it does); once the agent
// answered the prompt, or after Options.StopGrace, SIGTERM to its process
// group; SIGKILL once the grace passed again or as soon as ctx ends; then
// the wait for the agent and for every other process of the launch to be
// gone. Outcomes: engine.Stopped,
// engine.NotRunning (it had ended before), engine.Timeout with ctx's
// error, engine.Failed with an error (the rest of the launch could not be
// confirmed gone). Safe to call more than once and concurrently.
func (p *process) Stop(ctx context.Context) (engine.StopOutcome, error) {
	if p.Ended() {
		return engine.NotRunning, nil
	}
	grace := p.e.opts.StopGrace
	p.Mu.Lock()
	first := !p.StopRequested
	p.StopRequested = true
	conn, sid := p.conn, p.NativeID
	if grace == 0 {
		p.SignalLocked(syscall.SIGKILL)
	}
	p.Mu.Unlock()
	if grace > 0 {
		if first {
			if conn != nil {
				// A notification: it returns once written, or fails when
				// the agent is gone and its input closed.
				p.e.reg.WG.Go(func() { _ = conn.Cancel(p.ctx, sdk.CancelNotification{SessionId: sdk.SessionId(sid)}) })
			} else {
				// No turn to cancel yet: the end of its input ends an
				// agent between requests (an ACP agent ends at its end).
				_ = p.Stdin.Close()
			}
		}
		// The turn's answer (or the agent's end) first, then SIGTERM to
		// the group, then SIGKILL: each step waits the grace at most.
		if err := p.Escalate(ctx, proc.Step{Until: p.convDone, Grace: grace, Sig: syscall.SIGTERM},
			proc.Step{Until: p.Done(), Grace: grace, Sig: syscall.SIGKILL}); err != nil {
			return engine.Timeout, err
		}
	}
	return p.Confirm(ctx)
}

// readStderr keeps the end of the agent's standard error until it closes.
func (p *process) readStderr() {
	defer close(p.stderrDone)
	_, _ = io.Copy(stderrTail{p}, p.Stderr)
}

// stderrTail writes into the process's tail of standard error.
type stderrTail struct{ p *process }

func (t stderrTail) Write(b []byte) (int, error) {
	t.p.Mu.Lock()
	defer t.p.Mu.Unlock()
	t.p.AddTailLocked(b)
	return len(b), nil
}

// endAfterTurn ends an agent whose conversation is over: its input is
// closed; it gets turnEndGrace to exit by itself (an ACP agent is a server:
// neither adapter ends at the end of its input), then SIGTERM, then SIGKILL
// after the stop grace.
func (p *process) endAfterTurn() {
	_ = p.Stdin.Close()
	grace := p.e.opts.StopGrace
	_ = p.Escalate(context.Background(), proc.Step{Until: p.Done(), Grace: min(grace, turnEndGrace), Sig: syscall.SIGTERM},
		proc.Step{Until: p.Done(), Grace: grace, Sig: syscall.SIGKILL})
}

// wait waits for the agent, kills what it left behind, lets the
// conversation end, and settles Exit, readiness and Done.
func (p *process) wait() {
	defer p.e.reg.WG.Done()
	waitErr, treeErr := p.WaitAll()

	// The agent is gone: a pending request fails at the end of its output,
	// or, if something outside the launch's reach holds the pipe, once the
	// conversation's context ends (after proc.DrainBound).
	p.Drain(p.convDone, p.cancel)
	<-p.stderrDone

	exit, refused := p.Settle(p.Clock().Now(), waitErr, treeErr, func(x *engine.ExitStatus) {
		switch {
		case p.turnOK && !x.Stopped:
			x.Code = 0
		case x.Stopped:
		default:
			if x.Code == 0 {
				x.Code = 1
			}
			msg := p.turnErr
			if msg == "" {
				msg = "the agent exited before its turn ended"
				if waitErr != nil {
					msg += ": " + waitErr.Error()
				}
			}
			x.Err = errors.New(p.WithTailLocked(msg))
		}
	})
	if !refused {
		p.append(proc.Ended(p.req.LaunchID, "ended", exit))
	}
	if p.w != nil {
		// Closed before Done, so that the session's next launch finds
		// the transcript free.
		if err := p.w.Close(); err != nil {
			p.e.opts.Logger.Warn("acp: transcript", zap.String("launch", string(p.req.LaunchID)), zap.Error(err))
		}
	}
	p.e.opts.Logger.Debug("acp: exited", zap.String("launch", string(p.req.LaunchID)), zap.Int("code", exit.Code), zap.Bool("stopped", exit.Stopped))
	p.e.reg.Mu.Lock()
	p.e.reg.RemoveLocked(p)
	p.e.reg.Mu.Unlock()
	p.Finish()
}
