package exec

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

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/transcript"
)

// Bounds of the work that follows a child's exit.
const (
	// cleanupBound bounds killing what the child left behind.
	cleanupBound = 30 * time.Second
	// drainBound bounds the wait for the output pipes to reach EOF once
	// every known process of the launch is gone (a process that escaped
	// both the group and the marker may still hold them).
	drainBound = 2 * time.Second
	// maxLine bounds one output line; the rest of a longer line is dropped.
	maxLine = 16 << 20
	// tailBytes is how much of the child's standard error an exit error
	// quotes.
	tailBytes = 1024
)

// process is one launch. It implements engine.Process and
// engine.ActivitySnapshotter.
type process struct {
	e      *Engine
	req    engine.StartRequest
	marker []byte
	cmd    *osexec.Cmd
	pid    int
	start  uint64 // the leader's start time (set by run), 0 if unknown
	l      *launch
	w      *writer // nil without a session
	clk    clock.Clock

	stdout, stderr, stdin *os.File // the host's ends
	readers               sync.WaitGroup
	// gate is the host's end of a held child's gate pipe (a two-phase
	// start): writing proc.ReleaseWord lets the agent run, closing it without
	// ends the child. Closed once used; nil for a start that is not held.
	gate *os.File

	readyCh chan struct{}
	done    chan struct{}

	mu            sync.Mutex
	nativeID      string
	actual        engine.Actual // what the output said runs
	readyResolved bool
	readyID       string
	readyErr      error
	missing, auth bool
	stopRequested bool
	refused       bool // a held child whose admission failed: the agent never ran
	reaped        bool // the leader was waited for: its pid may be reused
	treeErr       error
	errTail       []byte
	exit          engine.ExitStatus
}

var (
	_ engine.Process             = (*process)(nil)
	_ engine.ActivitySnapshotter = (*process)(nil)
	_ engine.ActualReporter      = (*process)(nil)
)

// Actual implements engine.ActualReporter: the model and version the
// child's output named (Output.Model, Output.Version), as far as it was
// read.
func (p *process) Actual() engine.Actual {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.actual
}

// spawn starts the child; called with e.mu held.
func (e *Engine) spawn(req engine.StartRequest, l *launch, w *writer) (*process, error) {
	prof := &e.opts.Profile
	cmd := osexec.Command(prof.Command, l.argv...)
	if cmd.Err != nil {
		return nil, baton.Errorf(baton.ErrUnavailable, "exec: %s: %v", prof.Name, cmd.Err)
	}
	if req.Admit != nil {
		// Held: a shell that waits on the gate pipe (its descriptor 3)
		// and only then replaces itself with the agent, keeping the pid,
		// the process group and the environment (launchEnv included).
		cmd = osexec.Command(proc.HeldShell, append([]string{"-c", proc.HeldScript, proc.HeldArgv0, cmd.Path}, l.argv...)...)
		if cmd.Err != nil {
			return nil, baton.Errorf(baton.ErrUnavailable, "exec: a held start needs %s: %v", proc.HeldShell, cmd.Err)
		}
	}
	cmd.Dir, cmd.Env = req.Dir, l.env
	cmd.SysProcAttr = proc.SysProcAttr(e.opts.DeathSignal)
	p := &process{
		e: e, req: req, marker: proc.Marker(req.LaunchID), cmd: cmd, l: l, w: w, clk: e.opts.Clock,
		readyCh: make(chan struct{}), done: make(chan struct{}),
	}
	var child []*os.File
	closeAll := func() {
		for _, f := range append(child, p.stdout, p.stderr, p.stdin, p.gate) {
			if f != nil {
				f.Close()
			}
		}
	}
	pipe := func(host **os.File, forChild **os.File, childReads bool) error {
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
	var cout, cerr, cin *os.File
	err := pipe(&p.stdout, &cout, false)
	if err == nil {
		err = pipe(&p.stderr, &cerr, false)
	}
	if err == nil && l.stdinP {
		err = pipe(&p.stdin, &cin, true)
	}
	var cgate *os.File
	if err == nil && req.Admit != nil {
		err = pipe(&p.gate, &cgate, true)
	}
	if err != nil {
		closeAll()
		return nil, baton.Errorf(baton.ErrUnavailable, "exec: pipes: %v", err)
	}
	cmd.Stdout, cmd.Stderr = cout, cerr
	if cin != nil {
		cmd.Stdin = cin
	}
	if cgate != nil {
		cmd.ExtraFiles = []*os.File{cgate}
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, baton.Errorf(baton.ErrUnavailable, "exec: %s: %v", prof.Name, err)
	}
	for _, f := range child {
		f.Close()
	}
	p.pid = cmd.Process.Pid
	if req.Admit == nil {
		p.started()
	}
	e.opts.Logger.Debug("exec: spawned", zap.String("profile", prof.Name), zap.String("launch", string(req.LaunchID)),
		zap.Int("pid", p.pid), zap.Bool("held", req.Admit != nil))
	// Arm the readiness timeout before Start returns, so that a test on a
	// fake clock can count on it.
	timer := p.clk.NewTimer(engine.ReadyTimeoutOf(req))
	p.readers.Add(2)
	e.wg.Add(1)
	go p.watchReady(timer)
	go p.readStdout()
	go p.readStderr()
	if p.stdin != nil {
		p.readers.Add(1)
		go func() {
			defer p.readers.Done()
			_, _ = io.WriteString(p.stdin, l.stdin)
			p.stdin.Close()
		}()
	}
	return p, nil
}

// started records the start in the session's transcript: at the spawn, or
// at the release of a held child.
func (p *process) started() {
	if p.w == nil {
		return
	}
	prof := &p.e.opts.Profile
	p.w.Append(p.clk.Now(), p.req.LaunchID, p.req.Turn,
		transcript.Event{Kind: transcript.Lifecycle, Text: fmt.Sprintf("%s launch %s started (%s, %s turn)", prof.Name, p.req.LaunchID, modeText(p.req), p.req.Turn)},
		transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: p.req.Prompt})
}

// admit is the second phase of a held start: it asks req.Admit and then
// releases the child to run the agent, or, when admission fails, kills the
// held child and waits until every process of the launch is gone. The
// error is Admit's (or ctx's); the agent never ran then.
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
		<-p.done
		return err
	}
	// Recorded before the release, so that the start precedes anything
	// the agent does in the transcript. A child that is gone already (a
	// reaper on the machine took it) ends the launch like any exit: Ready
	// and Exit say so.
	p.started()
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

// Ready blocks until readiness is resolved and returns the native id; once
// it succeeded it keeps returning it, even after the child exited. Errors:
// engine.ErrReadyRejected (a Reject line, a readiness line without a native
// id, or the readiness timeout), engine.ErrExitedBeforeReady (see Exit);
// either also matches engine.ErrSessionMissing or engine.ErrAuth when the
// child said so; ctx's error.
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

// Stop ends the launch and confirms it: SIGTERM to the child's process
// group, SIGKILL after the grace (Options.StopGrace) or as soon as ctx
// ends, whichever comes first, then the wait for the child and for every
// other process of the launch to be gone. Outcomes: engine.Stopped,
// engine.NotRunning (it had ended before), engine.Timeout with ctx's error,
// engine.Failed with an error (the rest of the launch could not be
// confirmed gone). Safe to call more than once and concurrently.
func (p *process) Stop(ctx context.Context) (engine.StopOutcome, error) {
	select {
	case <-p.done:
		return engine.NotRunning, nil
	default:
	}
	grace := p.e.opts.StopGrace
	p.mu.Lock()
	p.stopRequested = true
	if !p.reaped {
		sig := syscall.SIGTERM
		if grace == 0 {
			sig = syscall.SIGKILL
		}
		_ = proc.SignalGroup(p.pid, sig)
	}
	p.mu.Unlock()
	if grace > 0 {
		t := p.clk.NewTimer(grace)
		select {
		case <-p.done:
		case <-t.C():
			p.mu.Lock()
			if !p.reaped {
				_ = proc.SignalGroup(p.pid, syscall.SIGKILL)
			}
			p.mu.Unlock()
		case <-ctx.Done():
			// The stop's time ran out during the grace: the stop is not
			// confirmed, but the agent does not get to run on.
			t.Stop()
			p.mu.Lock()
			if !p.reaped {
				_ = proc.SignalGroup(p.pid, syscall.SIGKILL)
			}
			p.mu.Unlock()
			return engine.Timeout, ctx.Err()
		}
		t.Stop()
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return engine.Timeout, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.treeErr != nil {
		return engine.Failed, baton.Errorf(baton.ErrUnavailable, "exec: launch %s: %v", p.req.LaunchID, p.treeErr)
	}
	return engine.Stopped, nil
}

// Done is closed once the child and every other process of the launch are
// gone; the transcript is synced right after.
func (p *process) Done() <-chan struct{} { return p.done }

// Exit reports how the child ended; valid once Done is closed.
func (p *process) Exit() engine.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// Activity reports a turn while the child runs: a headless CLI runs one turn
// per launch.
func (p *process) Activity() engine.Activity {
	select {
	case <-p.done:
		return engine.Activity{}
	default:
		return engine.Activity{Turn: true}
	}
}

// run waits for the child, kills what it left behind, drains its output,
// and settles Exit, readiness and Done.
func (p *process) run() {
	defer p.e.wg.Done()
	// The leader's start time bounds the exit scan; it is readable until
	// Wait reaps the leader, zombie or not.
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

	drained := make(chan struct{})
	go func() { p.readers.Wait(); close(drained) }()
	t := time.NewTimer(drainBound)
	select {
	case <-drained:
	case <-t.C:
		// Unblock the readers (and a prompt writer): something outside
		// the launch's reach holds the pipes.
		p.stdout.Close()
		p.stderr.Close()
		if p.stdin != nil {
			p.stdin.Close()
		}
		<-drained
	}
	t.Stop()
	p.stdout.Close()
	p.stderr.Close()

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
	case exit.Code != 0 && !exit.Stopped:
		msg := waitErr.Error()
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
		if exit.Clean() {
			exit.NativeID = p.nativeID
		}
		detail := fmt.Sprintf("exit code %d", exit.Code)
		if exit.Err != nil {
			detail = exit.Err.Error()
		}
		p.resolveLocked("", p.readyFailure(engine.ErrExitedBeforeReady, detail))
	}
	p.exit = exit
	refused := p.refused
	p.mu.Unlock()

	if p.w != nil && !refused {
		p.w.Append(now, p.req.LaunchID, p.req.Turn, transcript.Event{Kind: transcript.Lifecycle, Text: exitText(p.req.LaunchID, exit)})
	}
	p.l.cleanup()
	p.e.opts.Logger.Debug("exec: exited", zap.String("launch", string(p.req.LaunchID)), zap.Int("code", exit.Code), zap.Bool("stopped", exit.Stopped))
	// Everything of the launch is gone: confirm that first, then make the
	// transcript durable (an fsync takes milliseconds; a stop should not
	// wait for it). Close waits for this goroutine, sync included.
	close(p.done)
	if p.w != nil {
		if err := p.w.Sync(); err != nil {
			p.e.opts.Logger.Warn("exec: transcript sync", zap.String("launch", string(p.req.LaunchID)), zap.Error(err))
		}
	}
	p.e.release(p)
}

func exitText(id baton.LaunchID, x engine.ExitStatus) string {
	s := fmt.Sprintf("launch %s exited with code %d", id, x.Code)
	if x.Stopped {
		s += " (stopped)"
	}
	if x.Err != nil {
		s += ": " + x.Err.Error()
	}
	return s
}
