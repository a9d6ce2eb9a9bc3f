package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"sync"
	"syscall"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// Bounds of the work that follows an agent's exit.
const (
	// cleanupBound bounds killing what the agent left behind.
	cleanupBound = 30 * time.Second
	// drainBound bounds the wait for the conversation to end once every
	// known process of the launch is gone.
	drainBound = 2 * time.Second
	// turnEndGrace is how long an agent whose turn ended may take to exit
	// at the end of its input before it gets SIGTERM.
	turnEndGrace = 250 * time.Millisecond
	// tailBytes is how much of the agent's standard error an exit error
	// quotes.
	tailBytes = 1024
)

// process is one launch: one agent process, one session, one turn. It
// implements engine.Process, engine.ActivitySnapshotter and
// engine.ActualReporter.
type process struct {
	e      *Engine
	req    engine.StartRequest
	dir    string
	launch Launch
	marker []byte
	cmd    *osexec.Cmd
	pid    int
	start  uint64 // the leader's start time (set by wait), 0 if unknown
	w      *tlog.Writer
	clk    clock.Clock

	stdin, stdout, stderr *os.File // the host's ends
	gate                  *os.File // a held start's gate, nil otherwise
	stderrDone            chan struct{}

	ctx      context.Context // the conversation's; cancelled once the agent is gone
	cancel   context.CancelFunc
	convDone chan struct{} // closed when the conversation ends (or never began)
	readyCh  chan struct{}
	done     chan struct{}

	mu            sync.Mutex
	conn          *sdk.ClientSideConnection
	began         bool
	nativeID      string
	prompting     bool // the turn's prompt was sent: its updates count
	tool          bool // a tool call runs
	actual        engine.Actual
	readyResolved bool
	readyID       string
	readyErr      error
	turnOK        bool   // session/prompt answered with a stop reason that ends a turn
	turnErr       string // why the conversation failed, "" when it did not
	stopRequested bool
	refused       bool // a held start whose admission failed
	reaped        bool
	treeErr       error
	errTail       []byte
	exit          engine.ExitStatus
}

var (
	_ engine.Process             = (*process)(nil)
	_ engine.ActivitySnapshotter = (*process)(nil)
	_ engine.ActualReporter      = (*process)(nil)
)

// spawn starts the agent (or the held shell); called with e.mu held.
func (e *Engine) spawn(req engine.StartRequest, dir string, l Launch, w *tlog.Writer) (*process, error) {
	cmd := osexec.Command(e.opts.Command, e.opts.Args...)
	if cmd.Err != nil {
		return nil, baton.Errorf(baton.ErrUnavailable, "acp: %s: %v", e.opts.Name, cmd.Err)
	}
	if req.Admit != nil {
		cmd = osexec.Command(proc.HeldShell, append([]string{"-c", proc.HeldScript, proc.HeldArgv0, cmd.Path}, e.opts.Args...)...)
		if cmd.Err != nil {
			return nil, baton.Errorf(baton.ErrUnavailable, "acp: a held start needs %s: %v", proc.HeldShell, cmd.Err)
		}
	}
	cmd.Dir, cmd.Env = dir, e.env(req, l)
	cmd.SysProcAttr = proc.SysProcAttr(e.opts.DeathSignal)
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{
		e: e, req: req, dir: dir, launch: l, marker: proc.Marker(req.LaunchID), cmd: cmd, w: w, clk: e.opts.Clock,
		ctx: ctx, cancel: cancel, stderrDone: make(chan struct{}),
		convDone: make(chan struct{}), readyCh: make(chan struct{}), done: make(chan struct{}),
	}
	var child []*os.File
	fail := func(err error) (*process, error) {
		for _, f := range append(child, p.stdin, p.stdout, p.stderr, p.gate) {
			if f != nil {
				f.Close()
			}
		}
		cancel()
		return nil, baton.Errorf(baton.ErrUnavailable, "acp: %s: %v", e.opts.Name, err)
	}
	pipe := func(host, forChild **os.File, childReads bool) error {
		r, wr, err := os.Pipe()
		if err != nil {
			return err
		}
		if childReads {
			*host, *forChild = wr, r
			child = append(child, r)
		} else {
			*host, *forChild = r, wr
			child = append(child, wr)
		}
		return nil
	}
	var cin, cout, cerr, cgate *os.File
	err := pipe(&p.stdin, &cin, true)
	if err == nil {
		err = pipe(&p.stdout, &cout, false)
	}
	if err == nil {
		err = pipe(&p.stderr, &cerr, false)
	}
	if err == nil && req.Admit != nil {
		err = pipe(&p.gate, &cgate, true)
	}
	if err != nil {
		return fail(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = cin, cout, cerr
	if cgate != nil {
		cmd.ExtraFiles = []*os.File{cgate}
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	for _, f := range child {
		f.Close()
	}
	p.pid = cmd.Process.Pid
	e.opts.Logger.Debug("acp: spawned", zap.String("agent", e.opts.Name), zap.String("launch", string(req.LaunchID)),
		zap.Int("pid", p.pid), zap.Bool("held", req.Admit != nil))
	// Armed before Start returns, so that a test on a fake clock can count
	// on it.
	timer := p.clk.NewTimer(engine.ReadyTimeoutOf(req))
	e.wg.Add(2)
	go p.watchReady(timer)
	go p.readStderr()
	return p, nil
}

// begin records the start in the transcript and opens the conversation: at
// the spawn, or at the release of a held start.
func (p *process) begin() {
	p.mu.Lock()
	p.began = true
	p.mu.Unlock()
	p.append(
		transcript.Event{Kind: transcript.Lifecycle, Text: fmt.Sprintf("%s launch %s started (%s, %s turn)", p.e.opts.Name, p.req.LaunchID, modeText(p.req), p.req.Turn)},
		transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: p.req.Prompt})
	p.e.wg.Add(1)
	go p.converse()
}

// admit is the second phase of a held start (see engine.StartRequest.Admit).
func (p *process) admit(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		err = p.req.Admit(ctx)
	}
	if err != nil {
		p.mu.Lock()
		p.refused, p.stopRequested = true, true
		if !p.reaped {
			_ = proc.SignalGroup(p.pid, syscall.SIGKILL)
		}
		p.mu.Unlock()
		p.gate.Close()
		close(p.convDone)
		<-p.done
		return err
	}
	p.begin()
	_, _ = io.WriteString(p.gate, proc.ReleaseWord)
	p.gate.Close()
	return nil
}

func modeText(req engine.StartRequest) string {
	if req.Mode == engine.Resume {
		return "resume " + req.NativeID
	}
	return "fresh"
}

func (p *process) append(evs ...transcript.Event) {
	if p.w != nil {
		p.w.Append(p.clk.Now(), p.req.LaunchID, p.req.Turn, evs...)
	}
}

// Ready blocks until readiness is resolved and returns the native session
// id; once it succeeded it keeps returning it. Errors:
// engine.ErrReadyRejected (the agent refused the initialization, the
// session or the turn, or the readiness timeout passed),
// engine.ErrExitedBeforeReady (the agent ended first); either also matches
// engine.ErrSessionMissing (session/load of an unknown session, or a
// resume on an agent without loadSession), engine.ErrAuth (the agent asked
// for authentication) or engine.ErrUnsupportedConfig (the agent offers no
// way to set the configuration's model or effort, or no loadSession) when
// that is why; ctx's error.
func (p *process) Ready(ctx context.Context) (string, error) {
	select {
	case <-p.readyCh:
	case <-ctx.Done():
		select {
		case <-p.readyCh:
		default:
			return "", ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readyID, p.readyErr
}

// resolveLocked settles readiness once; it reports whether it did.
func (p *process) resolveLocked(id string, err error) bool {
	if p.readyResolved {
		return false
	}
	p.readyResolved, p.readyID, p.readyErr = true, id, err
	close(p.readyCh)
	return true
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
	select {
	case <-p.done:
		return engine.NotRunning, nil
	default:
	}
	grace := p.e.opts.StopGrace
	p.mu.Lock()
	first := !p.stopRequested
	p.stopRequested = true
	conn, sid, prompting := p.conn, p.nativeID, p.prompting
	if grace == 0 && !p.reaped {
		_ = proc.SignalGroup(p.pid, syscall.SIGKILL)
	}
	p.mu.Unlock()
	if grace > 0 {
		if first {
			if conn != nil && prompting {
				// A notification: it returns once written, or fails when
				// the agent is gone and its input closed.
				p.e.wg.Go(func() { _ = conn.Cancel(p.ctx, sdk.CancelNotification{SessionId: sdk.SessionId(sid)}) })
			} else {
				// No turn to cancel yet: the end of its input ends an
				// agent between requests.
				p.closeInput()
			}
		}
		// The turn's answer (or the agent's end) first, then SIGTERM to
		// the group, then SIGKILL: each step waits the grace at most.
		for _, step := range []struct {
			until <-chan struct{}
			sig   syscall.Signal
		}{{p.convDone, syscall.SIGTERM}, {p.done, syscall.SIGKILL}} {
			t := p.clk.NewTimer(grace)
			select {
			case <-step.until:
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
				p.signal(syscall.SIGKILL)
				return engine.Timeout, ctx.Err()
			}
			t.Stop()
			p.signal(step.sig)
		}
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return engine.Timeout, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.treeErr != nil {
		return engine.Failed, baton.Errorf(baton.ErrUnavailable, "acp: launch %s: %v", p.req.LaunchID, p.treeErr)
	}
	return engine.Stopped, nil
}

// signal sends sig to the launch's process group while its leader was
// not reaped (its pid may be reused after).
func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		_ = proc.SignalGroup(p.pid, sig)
	}
}

// closeInput closes the agent's standard input: an ACP agent ends at its
// end.
func (p *process) closeInput() { _ = p.stdin.Close() }

// Done is closed once the agent and every other process of the launch are
// gone and the transcript is synced.
func (p *process) Done() <-chan struct{} { return p.done }

// Exit reports how the launch ended; valid once Done is closed. Code is
// the turn's, not the agent process's: 0 when session/prompt answered with
// a stop reason that ends a turn (end_turn, max_tokens,
// max_turn_requests) and no stop was asked, whatever signal then ended the
// agent; otherwise the agent's exit code (1 when it exited 0, -1 when a
// signal ended it), and Err says why unless Stop asked.
func (p *process) Exit() engine.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// Actual implements engine.ActualReporter: the agent's version (its
// initialize answer's agentInfo) and the model its session reported, or
// the configuration's model once the engine set it.
func (p *process) Actual() engine.Actual {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.actual
}

// Activity reports a turn while the agent runs, and a tool while one of
// its tool calls runs.
func (p *process) Activity() engine.Activity {
	select {
	case <-p.done:
		return engine.Activity{}
	default:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return engine.Activity{Turn: true, Tool: p.tool}
}

// watchReady enforces the readiness timeout.
func (p *process) watchReady(t clock.Timer) {
	defer p.e.wg.Done()
	defer t.Stop()
	select {
	case <-p.readyCh:
		return
	case <-p.done:
		return
	case <-t.C():
	}
	p.mu.Lock()
	resolved := p.resolveLocked("", readyFailure(engine.ErrReadyRejected, fmt.Sprintf("no readiness within %s", engine.ReadyTimeoutOf(p.req))))
	p.mu.Unlock()
	if resolved {
		_, _ = p.Stop(context.Background())
	}
}

func (p *process) readStderr() {
	defer p.e.wg.Done()
	defer close(p.stderrDone)
	buf := make([]byte, 4096)
	for {
		n, err := p.stderr.Read(buf)
		if n > 0 {
			p.mu.Lock()
			p.errTail = append(p.errTail, buf[:n]...)
			if len(p.errTail) > tailBytes {
				p.errTail = append(p.errTail[:0], p.errTail[len(p.errTail)-tailBytes:]...)
			}
			p.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// endAfterTurn ends an agent whose conversation is over: its input is
// closed; it gets turnEndGrace to exit by itself (an ACP agent is a server:
// neither adapter ends at the end of its input), then SIGTERM, then SIGKILL
// after the stop grace.
func (p *process) endAfterTurn() {
	defer p.e.wg.Done()
	p.closeInput()
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		grace := p.e.opts.StopGrace
		if i == 0 {
			grace = min(grace, turnEndGrace)
		}
		t := p.clk.NewTimer(grace)
		select {
		case <-p.done:
			t.Stop()
			return
		case <-t.C():
		}
		p.signal(sig)
	}
}

// wait waits for the agent, kills what it left behind, lets the
// conversation end, and settles Exit, readiness and Done.
func (p *process) wait() {
	defer p.e.wg.Done()
	if st, err := proc.ReadStat(p.pid); err == nil {
		p.start = st.Start
	}
	waitErr := p.cmd.Wait()
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), cleanupBound)
	_, treeErr := proc.Reap(ctx, p.e.opts.Clock, p.marker, p.pid, p.start, 0)
	cancel()

	// The agent is gone: a pending request fails at the end of its output,
	// or, if something outside the launch's reach holds the pipe, once the
	// conversation's context ends.
	t := time.NewTimer(drainBound)
	select {
	case <-p.convDone:
	case <-t.C:
	}
	t.Stop()
	p.cancel()
	p.stdout.Close()
	p.stdin.Close()
	p.stderr.Close()
	<-p.convDone
	<-p.stderrDone

	now := p.clk.Now()
	p.mu.Lock()
	exit := engine.ExitStatus{At: now, Stopped: p.stopRequested, Code: -1}
	if ps := p.cmd.ProcessState; ps != nil {
		exit.Code = ps.ExitCode()
	}
	var ee *osexec.ExitError
	switch {
	case waitErr != nil && !errors.As(waitErr, &ee):
		exit.Err = waitErr
	case p.turnOK && !exit.Stopped:
		exit.Code = 0
	case exit.Stopped:
	default:
		if exit.Code == 0 {
			exit.Code = 1
		}
		msg := p.turnErr
		if msg == "" {
			msg = "the agent exited before its turn ended"
			if waitErr != nil {
				msg += ": " + waitErr.Error()
			}
		}
		if tail := bytes.TrimSpace(p.errTail); len(tail) > 0 {
			msg += ": " + string(tail)
		}
		exit.Err = errors.New(msg)
	}
	if treeErr != nil {
		p.treeErr = treeErr
		exit.Err = errors.Join(exit.Err, fmt.Errorf("processes of the launch may still run: %w", treeErr))
	}
	if !p.readyResolved {
		detail := fmt.Sprintf("exit code %d", exit.Code)
		if exit.Err != nil {
			detail = exit.Err.Error()
		}
		p.resolveLocked("", readyFailure(engine.ErrExitedBeforeReady, detail))
	}
	p.exit = exit
	refused := p.refused
	p.mu.Unlock()

	if !refused {
		p.append(transcript.Event{Kind: transcript.Lifecycle, Text: exitText(p.req.LaunchID, exit)})
	}
	if p.w != nil {
		// Closed before Done, so that the session's next launch finds
		// the transcript free.
		if err := p.w.Close(); err != nil {
			p.e.opts.Logger.Warn("acp: transcript", zap.String("launch", string(p.req.LaunchID)), zap.Error(err))
		}
	}
	p.e.opts.Logger.Debug("acp: exited", zap.String("launch", string(p.req.LaunchID)), zap.Int("code", exit.Code), zap.Bool("stopped", exit.Stopped))
	p.e.release(p)
	close(p.done)
}

func exitText(id baton.LaunchID, x engine.ExitStatus) string {
	s := fmt.Sprintf("launch %s ended with code %d", id, x.Code)
	if x.Stopped {
		s += " (stopped)"
	}
	if x.Err != nil {
		s += ": " + x.Err.Error()
	}
	return s
}
