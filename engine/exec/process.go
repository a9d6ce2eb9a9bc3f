package exec

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/transcript"
)

// maxLine bounds one output line; the rest of a longer line is dropped.
const maxLine = 16 << 20

// process is one launch: its proc.Child (readiness, exit, Done, Exit,
// Activity, Actual: the model and version the child's output named,
// Output.Model and Output.Version, as far as it was read) and what the
// profile's output says. It implements engine.Process and reports its
// engine.Activity.
type process struct {
	proc.Child
	e   *Engine
	req engine.StartRequest
	l   *launch
	w   *writer // nil without a session
	// meter reads the context usage (nil when the profile reads none);
	// used by the stdout reader, then by run once the readers are done.
	meter UsageMeter

	// readers counts the goroutines on the child's pipes. After a held
	// start, Gate is closed once used: writing proc.ReleaseWord lets the
	// agent run, closing it without ends the child.
	readers sync.WaitGroup

	// Guarded by Child.Mu: the sentinel a readiness failure also matches
	// (proc.Command.Refine) after what the output said:
	// engine.ErrSessionMissing (Output.SessionMissing) before
	// engine.ErrAuth (Output.AuthFailed), nil for neither.
	said error
}

var _ interface {
	engine.Process
	Activity() engine.Activity
} = (*process)(nil)

// spawn starts the child; called with e.reg.Mu held.
func (e *Engine) spawn(req engine.StartRequest, l *launch, w *writer) (*process, error) {
	prof := &e.opts.Profile
	p := &process{e: e, req: req, l: l, w: w}
	if prof.Output.Usage != nil {
		p.meter = prof.Output.Usage()
	}
	err := p.Spawn(proc.Command{
		Engine: "exec", Name: prof.Name, Path: prof.Command, Args: l.argv, Dir: req.Dir, Env: l.env,
		Launch: req.LaunchID, DeathSignal: e.opts.DeathSignal, Clock: e.opts.Clock, Stdin: prof.Stdin, Held: req.Admit != nil,
		ExitNativeID: true, Refine: func() error { return p.said },
	})
	if err != nil {
		return nil, err
	}
	if req.Admit == nil {
		p.started()
	}
	e.opts.Logger.Debug("exec: spawned", zap.String("profile", prof.Name), zap.String("launch", string(req.LaunchID)),
		zap.Int("pid", p.PID()), zap.Bool("held", req.Admit != nil))
	p.WatchReady(&e.reg.WG, req, func() { _, _ = p.Stop(context.Background()) })
	p.readers.Go(func() { readLines(p.Stdout, p.handleLine) })
	p.readers.Go(func() { readLines(p.Stderr, p.stderrLine) })
	if p.Stdin != nil {
		p.readers.Go(func() {
			_, _ = io.WriteString(p.Stdin, req.Prompt)
			p.Stdin.Close()
		})
	}
	return p, nil
}

// started records the start in the session's transcript: at the spawn, or
// at the release of a held child.
func (p *process) started() { p.append(proc.Started(p.e.opts.Profile.Name, p.req)...) }

// append records events in the session's transcript, when there is one.
func (p *process) append(evs ...transcript.Event) {
	if p.w != nil {
		p.w.Append(p.Clock().Now(), p.req.LaunchID, p.req.Turn, evs...)
	}
}

// sync makes the session's transcript durable, when there is one.
func (p *process) sync() {
	if p.w == nil {
		return
	}
	if err := p.w.Sync(); err != nil {
		p.e.opts.Logger.Warn("exec: transcript sync", zap.String("launch", string(p.req.LaunchID)), zap.Error(err))
	}
}

// Stop ends the launch and confirms it: SIGTERM to the child's process
// group, SIGKILL after the grace (Options.StopGrace) or as soon as ctx
// ends, whichever comes first, then the wait for the child and for every
// other process of the launch to be gone. Outcomes: engine.Stopped,
// engine.NotRunning (it had ended before), engine.Timeout with ctx's error,
// engine.Failed with an error (the rest of the launch could not be
// confirmed gone). Safe to call more than once and concurrently.
func (p *process) Stop(ctx context.Context) (engine.StopOutcome, error) {
	if p.Ended() {
		return engine.NotRunning, nil
	}
	grace, sig := p.e.opts.StopGrace, syscall.SIGKILL
	if grace > 0 {
		sig = syscall.SIGTERM
	}
	p.Mu.Lock()
	p.StopRequested = true
	p.SignalLocked(sig)
	p.Mu.Unlock()
	if grace > 0 {
		if err := p.Escalate(ctx, proc.Step{Until: p.Done(), Grace: grace, Sig: syscall.SIGKILL}); err != nil {
			return engine.Timeout, err
		}
	}
	return p.Confirm(ctx)
}

// run waits for the child, kills what it left behind, drains its output,
// and settles Exit, readiness and Done.
func (p *process) run() {
	defer p.e.reg.WG.Done()
	waitErr, treeErr := p.WaitAll()

	// The output pipes reach EOF within proc.DrainBound once every known
	// process of the launch is gone; a process that escaped both the
	// group and the marker may still hold them (and the prompt's).
	drained := make(chan struct{})
	go func() { p.readers.Wait(); close(drained) }()
	p.Drain(drained, nil)
	p.setUsage()

	exit, refused := p.Settle(p.Clock().Now(), waitErr, treeErr, func(x *engine.ExitStatus) {
		if x.Code != 0 && !x.Stopped {
			x.Err = errors.New(p.WithTailLocked(waitErr.Error()))
		}
	})

	if !refused {
		p.append(proc.Ended(p.req.LaunchID, "exited", exit))
	}
	p.l.cleanup()
	p.e.opts.Logger.Debug("exec: exited", zap.String("launch", string(p.req.LaunchID)), zap.Int("code", exit.Code), zap.Bool("stopped", exit.Stopped))
	// Everything of the launch is gone: confirm that first, then make the
	// transcript durable (an fsync takes milliseconds; a stop should not
	// wait for it). Close waits for this goroutine, sync included.
	p.Finish()
	p.sync()
	p.e.release(p)
}

// stopUnready ends a launch whose readiness failed: it gives the child the
// stop grace to exit by itself (a CLI that refused its turn usually does),
// then stops it.
func (p *process) stopUnready() {
	p.e.reg.WG.Go(func() {
		t := p.Clock().NewTimer(p.e.opts.StopGrace)
		defer t.Stop()
		select {
		case <-p.Done():
			return
		case <-t.C():
		}
		_, _ = p.Stop(context.Background())
	})
}

// ReapLaunch implements engine.Reaper: it stops every live process of
// launch id, whichever host spawned it (an orphan of a crashed host
// included), and confirms them gone. It finds them by the BATON_LAUNCH_ID entry
// of their environment and by the process groups those belong to; a pid is
// signalled only while its start time still matches, so a reused pid is
// never mistaken for the agent. They get SIGTERM, SIGKILL after
// Options.StopGrace (or as soon as ctx ends, whichever comes first), and
// count as gone once they no longer run (a zombie counts as gone).
//
// Outcomes: engine.Stopped (some ran and are gone), engine.NotRunning (none
// ran), engine.Timeout with ctx's error (ctx ended first), engine.Failed
// with an error (the process table could not be read, or a blank id).
// Safe to call more than once and concurrently.
func (e *Engine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	return proc.ReapLaunch(ctx, "exec", e.opts.Clock, id, e.opts.StopGrace)
}

// readLines calls fn for each line of f (without its line end).
func readLines(f *os.File, fn func([]byte)) {
	r := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull || long != nil {
			// A long line comes in pieces: keep maxLine bytes of it.
			long = append(long, line[:min(len(line), maxLine-len(long))]...)
			if err == bufio.ErrBufferFull {
				continue
			}
			line, long = long, nil
		}
		if line = bytes.TrimRight(line, "\r\n"); len(line) > 0 {
			fn(line)
		}
		if err != nil {
			return
		}
	}
}

// stderrLine reads one line of standard error: a transcript note, what it
// says of the session, the tail an exit error quotes.
func (p *process) stderrLine(line []byte) {
	p.append(transcript.Event{Kind: transcript.Note, Text: "stderr: " + string(line)})
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.noteLocked(&p.e.opts.Profile.Output, line)
	p.AddTailLocked(line, []byte{'\n'})
}

func (p *process) noteLocked(out *Output, line []byte) {
	switch {
	case out.SessionMissing != nil && out.SessionMissing.Match(line):
		p.said = engine.ErrSessionMissing
	case p.said == nil && out.AuthFailed != nil && out.AuthFailed.Match(line):
		p.said = engine.ErrAuth
	}
}

// handleLine reads one line of standard output: native id, readiness,
// transcript, turn end.
func (p *process) handleLine(line []byte) {
	out := &p.e.opts.Profile.Output
	if p.meter != nil {
		p.meter.Line(line)
	}
	var obj map[string]any
	if out.JSON && line[0] == '{' {
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		if d.Decode(&obj) != nil {
			obj = nil
		}
	}
	unready := false
	p.Mu.Lock()
	p.noteLocked(out, line)
	for _, f := range [...]struct {
		rules []Rule
		v     *string
	}{{out.NativeID, &p.NativeID}, {out.Model, &p.Seen.Model}, {out.Version, &p.Seen.Version}} {
		if *f.v != "" {
			continue
		}
		if r, ok := matchAny(f.rules, line, obj); ok {
			*f.v = r.id(line, obj)
		}
	}
	if !p.ResolvedLocked() {
		if _, ok := matchAny(out.Reject, line, obj); ok {
			unready = p.FailReadyLocked(engine.ErrReadyRejected, "the first turn was refused: "+clip(line, 512))
		} else if r, ok := matchAny(out.Ready, line, obj); ok {
			id := cmp.Or(p.NativeID, r.id(line, obj))
			if id == "" && p.req.Mode == engine.Resume {
				id = p.req.NativeID
			}
			if id == "" {
				unready = p.FailReadyLocked(engine.ErrReadyRejected, "ready without a native session id")
			} else {
				p.NativeID = id
				p.ResolveLocked(id)
			}
		}
	}
	p.Mu.Unlock()
	// Readiness first, the transcript right after: a confirmation should
	// not wait for a disk write.
	if p.w != nil {
		if out.Events != nil {
			p.append(out.Events(line)...)
		} else {
			p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: string(line)})
		}
	}
	if unready {
		p.stopUnready()
	}
	if _, ok := matchAny(out.TurnEnd, line, obj); ok {
		p.sync()
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
