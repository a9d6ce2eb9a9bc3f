package proc

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

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
)

// Bounds of the work that follows a child's exit, and how much of its
// standard error an exit error quotes.
const (
	// CleanupBound bounds killing what the child left behind.
	CleanupBound = 30 * time.Second
	// DrainBound bounds the wait for the child's output (its readers, its
	// conversation) to end once every known process of the launch is gone.
	DrainBound = 2 * time.Second
	// TailBytes is how much of the child's standard error Child keeps.
	TailBytes = 1024
)

// Command is what Child.Spawn starts.
type Command struct {
	// Engine ("exec", "acp") and Name (the agent's) begin the errors.
	Engine, Name string
	// Path and Args are the agent's command line; Dir and Env its working
	// directory and environment.
	Path string
	Args []string
	Dir  string
	Env  []string
	// Launch is the launch's id (the stop errors name it).
	Launch baton.LaunchID
	// DeathSignal is the child's parent-death signal (see SysProcAttr).
	DeathSignal syscall.Signal
	// Clock times the launch (Child.Clock).
	Clock clock.Clock
	// Stdin asks for a pipe to the child's standard input (Child.Stdin);
	// without it the child reads the null device.
	Stdin bool
	// Held starts the child held (HeldShell), its gate pipe (Child.Gate)
	// as its descriptor 3: see Child.Admit.
	Held bool
	// ExitNativeID: a clean exit before readiness names Child.NativeID in
	// its exit status.
	ExitNativeID bool
	// Refine, when set, returns a sentinel that every readiness failure
	// also matches (nil for none); it is called with Mu held.
	Refine func() error
}

// Child is the process of one launch as both subprocess engines keep it:
// its pipes, its readiness, its exit, its activity, and the confirmed stop
// and reap of everything of the launch. An engine's process type embeds it
// (Spawn starts it) and adds what its protocol reads and writes; it
// implements engine.Process's Ready, Done, Exit and Actual, and an
// Activity method; the embedding type adds Stop.
type Child struct {
	// Mu guards the exported fields up to Stdin, Child's own unexported
	// state, and whatever of the embedding process's state that engine
	// guards with it.
	Mu sync.Mutex
	// NativeID is the native session id the agent named.
	NativeID string
	// Seen is what the agent said runs (Actual reports it).
	Seen engine.Actual
	// Usage is the context usage the agent reported (Settle puts it in
	// the exit status); the engine sets it before Settle.
	Usage engine.Usage
	// Tool: one of the agent's tool calls runs (Activity reports it).
	Tool bool
	// StopRequested: a stop was asked (or a held start refused).
	StopRequested bool
	// Refused: a held start whose admission failed; the agent never ran.
	Refused bool

	// The host's ends of the child's pipes, set by Spawn; Stdin and Gate
	// are nil unless asked.
	Stdin, Stdout, Stderr, Gate *os.File

	cmd   *osexec.Cmd
	how   Command
	ready chan struct{}
	done  chan struct{}

	// Guarded by Mu.
	resolved bool
	readyID  string
	readyErr error
	reaped   bool // the leader was waited for: its pid may be reused
	treeErr  error
	tail     []byte
	exit     engine.ExitStatus
}

// Spawn starts c's child: how's command (held in HeldShell when how.Held)
// in its own process group with the parent-death signal, its output on
// pipes. Errors: an error matching baton.ErrUnavailable when the command is not found, the
// held shell is missing, or the pipes or the start fail; nothing is left
// open then.
func (c *Child) Spawn(how Command) error {
	c.how = how
	c.ready, c.done = make(chan struct{}), make(chan struct{})
	cmd := osexec.Command(how.Path, how.Args...)
	if cmd.Err != nil {
		return baton.Errorf(baton.ErrUnavailable, "%s: %s: %v", how.Engine, how.Name, cmd.Err)
	}
	if how.Held {
		// A shell that waits on the gate pipe (its descriptor 3) and only
		// then replaces itself with the agent, keeping the pid, the process
		// group and the environment (LaunchEnv included).
		cmd = osexec.Command(HeldShell, append([]string{"-c", HeldScript, HeldArgv0, cmd.Path}, how.Args...)...)
		if cmd.Err != nil {
			return baton.Errorf(baton.ErrUnavailable, "%s: a held start needs %s: %v", how.Engine, HeldShell, cmd.Err)
		}
	}
	cmd.Dir, cmd.Env = how.Dir, how.Env
	cmd.SysProcAttr = SysProcAttr(how.DeathSignal)
	// The pipes: c keeps the host's ends; the child's are closed once it
	// started, all of them when the pipes or the start fail.
	var child, host []*os.File
	var err error
	pipe := func(h **os.File, childReads bool) *os.File {
		var r, w *os.File
		if err == nil {
			r, w, err = os.Pipe()
		}
		if err != nil {
			return nil
		}
		if childReads {
			r, w = w, r
		}
		*h, host, child = r, append(host, r), append(child, w)
		return w
	}
	cmd.Stdout, cmd.Stderr = pipe(&c.Stdout, false), pipe(&c.Stderr, false)
	if how.Stdin {
		cmd.Stdin = pipe(&c.Stdin, true)
	}
	if how.Held {
		cmd.ExtraFiles = []*os.File{pipe(&c.Gate, true)}
	}
	what := "pipes"
	if err == nil {
		what, err = how.Name, cmd.Start()
	}
	for _, f := range child {
		f.Close()
	}
	if err != nil {
		for _, f := range host {
			f.Close()
		}
		return baton.Errorf(baton.ErrUnavailable, "%s: %s: %v", how.Engine, what, err)
	}
	c.cmd = cmd
	return nil
}

// PID is the child's process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Clock is Command.Clock.
func (c *Child) Clock() clock.Clock { return c.how.Clock }

// Admit is the second phase of a held start (see engine.StartRequest.Admit):
// it asks admit, then calls begin and releases the child to run the agent
// (begin runs first, so that the start precedes anything the agent does in
// the transcript; a child that is gone already ends the launch like any
// exit). When admission fails, or ctx ended, it kills the held child,
// closes the gate, calls refused (when set) and waits until Done is closed:
// the agent never ran. The error is admit's or ctx's.
func (c *Child) Admit(ctx context.Context, admit func(context.Context) error, begin, refused func()) error {
	err := ctx.Err()
	if err == nil {
		err = admit(ctx)
	}
	if err != nil {
		c.Mu.Lock()
		c.Refused, c.StopRequested = true, true
		c.SignalLocked(syscall.SIGKILL)
		c.Mu.Unlock()
		c.Gate.Close()
		if refused != nil {
			refused()
		}
		<-c.done
		return err
	}
	begin()
	_, _ = io.WriteString(c.Gate, ReleaseWord)
	c.Gate.Close()
	return nil
}

// SignalLocked sends sig to the child's process group while its leader
// was not reaped (its pid may be reused after). Called with Mu held.
func (c *Child) SignalLocked(sig syscall.Signal) {
	if !c.reaped {
		_ = SignalGroup(c.PID(), sig)
	}
}

// Signal is SignalLocked for a caller without Mu.
func (c *Child) Signal(sig syscall.Signal) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.SignalLocked(sig)
}

// Ready blocks until readiness is resolved and returns the native id; once
// it succeeded it keeps returning it, even after the child exited. Errors:
// the readiness failure, or ctx's error.
func (c *Child) Ready(ctx context.Context) (string, error) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		select {
		case <-c.ready:
		default:
			return "", ctx.Err()
		}
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.readyID, c.readyErr
}

// ResolvedLocked reports whether readiness is settled. Called with Mu held.
func (c *Child) ResolvedLocked() bool { return c.resolved }

// ResolveLocked settles readiness once, as a success with native id id; it
// reports whether it did. Called with Mu held.
func (c *Child) ResolveLocked(id string) bool { return c.settleLocked(id, nil) }

// FailReadyLocked settles readiness once as a failure that reads base's
// message followed by detail and matches base, each of also and
// Command.Refine's sentinel; it reports whether it did. Called with Mu
// held.
func (c *Child) FailReadyLocked(base *baton.Error, detail string, also ...error) bool {
	errs := append([]error{base}, also...)
	if c.how.Refine != nil {
		errs = append(errs, c.how.Refine())
	}
	return c.settleLocked("", &readyError{msg: base.Error() + ": " + detail, errs: errs})
}

// readyError is a readiness failure: its first error's message followed by
// a detail; it matches each of errs (nil entries match nothing).
type readyError struct {
	msg  string
	errs []error
}

func (e *readyError) Error() string   { return e.msg }
func (e *readyError) Unwrap() []error { return e.errs }

func (c *Child) settleLocked(id string, err error) bool {
	if c.resolved {
		return false
	}
	c.resolved, c.readyID, c.readyErr = true, id, err
	close(c.ready)
	return true
}

// WatchReady enforces req's readiness timeout (its ReadyTimeout, or
// engine.DefaultReadyTimeout when that is zero or negative) on a goroutine
// that wg counts: when it passes before readiness is settled and before
// Done, readiness fails with engine.ErrReadyRejected and stop runs. The
// timer is armed on the child's clock before WatchReady returns, so that a
// test on a fake clock can count on it.
func (c *Child) WatchReady(wg *sync.WaitGroup, req engine.StartRequest, stop func()) {
	d := req.ReadyTimeout
	if d <= 0 {
		d = engine.DefaultReadyTimeout
	}
	t := c.Clock().NewTimer(d)
	wg.Go(func() {
		defer t.Stop()
		select {
		case <-c.ready:
			return
		case <-c.done:
			return
		case <-t.C():
		}
		c.Mu.Lock()
		failed := c.FailReadyLocked(engine.ErrReadyRejected, fmt.Sprintf("no readiness within %s", d))
		c.Mu.Unlock()
		if failed {
			stop()
		}
	})
}

// AddTailLocked appends parts to the end of the child's standard error
// that an exit error quotes (the last TailBytes). Called with Mu held.
func (c *Child) AddTailLocked(parts ...[]byte) {
	c.tail = append(c.tail, bytes.Join(parts, nil)...)
	if n := len(c.tail); n > TailBytes {
		c.tail = append(c.tail[:0], c.tail[n-TailBytes:]...)
	}
}

// WithTailLocked returns msg followed by the end of the child's standard
// error, when it wrote any. Called with Mu held.
func (c *Child) WithTailLocked(msg string) string {
	if tail := bytes.TrimSpace(c.tail); len(tail) > 0 {
		msg += ": " + string(tail)
	}
	return msg
}

// WaitAll waits for the child, then kills what of the launch it left
// behind (within CleanupBound). It returns the child's wait error and the
// reap's (processes of the launch may still run).
func (c *Child) WaitAll() (waitErr, treeErr error) {
	// The leader's start time bounds the exit scan; it is readable until
	// Wait reaps the leader, zombie or not.
	var start uint64
	if st, err := ReadStat(c.PID()); err == nil {
		start = st.Start
	}
	waitErr = c.cmd.Wait()
	c.Mu.Lock()
	c.reaped = true
	c.Mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), CleanupBound)
	defer cancel()
	_, treeErr = Reap(ctx, c.how.Clock, Marker(c.how.Launch), c.PID(), start, 0)
	return waitErr, treeErr
}

// Drain waits for done (the end of what reads the child's output) within
// DrainBound, then calls before (when set), closes the host's ends of the
// child's pipes (which unblocks their readers when something outside the
// launch's reach still holds them), and waits for done.
func (c *Child) Drain(done <-chan struct{}, before func()) {
	select {
	case <-done:
	case <-time.After(DrainBound):
	}
	if before != nil {
		before()
	}
	for _, f := range []*os.File{c.Stdout, c.Stderr, c.Stdin} {
		f.Close() // nil when not asked: its Close only fails
	}
	<-done
}

// Settle records how the launch ended, once WaitAll returned waitErr and
// treeErr and the child's output is drained: At now, Usage, Stopped when a stop
// was asked, the child's exit code (-1 when a signal ended it), waitErr
// when the wait itself failed, else what judge (called with Mu held) makes
// of the exit; then the error of treeErr, and, when readiness was still
// open, its failure (engine.ErrExitedBeforeReady). It returns the status
// and whether the launch was refused; the engine closes Done (Finish).
func (c *Child) Settle(now time.Time, waitErr, treeErr error, judge func(x *engine.ExitStatus)) (engine.ExitStatus, bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	// ExitCode is -1 when a signal ended the child, or when it has no
	// state (the wait failed).
	exit := engine.ExitStatus{At: now, Stopped: c.StopRequested, Code: c.cmd.ProcessState.ExitCode(), Usage: c.Usage}
	if ee := (*osexec.ExitError)(nil); waitErr != nil && !errors.As(waitErr, &ee) {
		exit.Err = waitErr
	} else {
		judge(&exit)
	}
	if treeErr != nil {
		c.treeErr = treeErr
		exit.Err = errors.Join(exit.Err, fmt.Errorf("processes of the launch may still run: %w", treeErr))
	}
	if !c.resolved {
		if c.how.ExitNativeID && exit.Clean() {
			exit.NativeID = c.NativeID
		}
		detail := fmt.Sprintf("exit code %d", exit.Code)
		if exit.Err != nil {
			detail = exit.Err.Error()
		}
		c.FailReadyLocked(engine.ErrExitedBeforeReady, detail)
	}
	c.exit = exit
	return exit, c.Refused
}

// Finish closes Done: everything of the launch is gone.
func (c *Child) Finish() { close(c.done) }

// Ended reports whether Done is closed.
func (c *Child) Ended() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Step is one step of Escalate: the wait for Until, Grace at most, then
// Sig to the child's process group.
type Step struct {
	Until <-chan struct{}
	Grace time.Duration
	Sig   syscall.Signal
}

// Escalate runs steps in order. When ctx ends during one, it sends
// SIGKILL and returns ctx's error: the stop is not confirmed, but the
// agent does not get to run on.
func (c *Child) Escalate(ctx context.Context, steps ...Step) error {
	for _, s := range steps {
		t := c.Clock().NewTimer(s.Grace)
		select {
		case <-s.Until:
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			c.Signal(syscall.SIGKILL)
			return ctx.Err()
		}
		t.Stop()
		c.Signal(s.Sig)
	}
	return nil
}

// Confirm ends a stop: it waits until Done is closed, or ctx ends
// (engine.Timeout with ctx's error), and reports engine.Stopped, or
// engine.Failed with an error when processes of the launch may still run.
func (c *Child) Confirm(ctx context.Context) (engine.StopOutcome, error) {
	select {
	case <-c.done:
	case <-ctx.Done():
		return engine.Timeout, ctx.Err()
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.treeErr != nil {
		return engine.Failed, baton.Errorf(baton.ErrUnavailable, "%s: launch %s: %v", c.how.Engine, c.how.Launch, c.treeErr)
	}
	return engine.Stopped, nil
}

// Done is closed once the child and every other process of the launch
// are gone.
func (c *Child) Done() <-chan struct{} { return c.done }

// Exit reports how the launch ended; valid once Done is closed.
func (c *Child) Exit() engine.ExitStatus {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.exit
}

// Actual implements engine.Process: Seen, as far as the agent said
// it.
func (c *Child) Actual() engine.Actual {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.Seen
}

// Activity reports what the child is doing: a turn while the child
// runs (both engines run one turn a launch), and a tool while Tool says
// so.
func (c *Child) Activity() engine.Activity {
	if c.Ended() {
		return engine.Activity{}
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return engine.Activity{Turn: true, Tool: c.Tool}
}
