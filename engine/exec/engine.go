package exec

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// Options configure an Engine.
type Options struct {
	// Profile describes the agent CLI. Required: Command and Fresh.
	Profile Profile
	// DataDir holds the transcripts (DataDir/transcripts) and each
	// launch's private files (DataDir/launches). Required.
	DataDir string
	// Env is the base environment of every child; nil means the host's
	// environment at each Start. Any BATON_LAUNCH_ID entry in it is replaced.
	Env []string
	// StopGrace is how long a stop waits after SIGTERM before SIGKILL;
	// zero means 5 s, negative means SIGKILL at once. A stop
	// whose context ends first sends SIGKILL then (and reports
	// engine.Timeout): keep it well under the stop timeout of the caller
	// (see package handoff, Timeouts).
	StopGrace time.Duration
	// DeathSignal is what the kernel sends a child when its host dies
	// (Linux's parent-death signal); zero means SIGKILL.
	DeathSignal syscall.Signal
	// Clock times readiness timeouts and stop graces; nil means clock.Real.
	Clock clock.Clock
	// Logger receives debug lines about launches; nil means zap.NewNop.
	Logger *zap.Logger
}

// Engine is an engine.Engine that runs an agent CLI as a child process per
// launch. It is also an engine.Reaper, an engine.Validator and an
// engine.Reconfigurer. Safe for concurrent use.
type Engine struct {
	opts Options

	reg     proc.Launches[*process] // its Mu guards writers and idle too
	writers map[baton.SessionID]*writer
	idle    []baton.SessionID // sessions whose writer no launch uses, oldest first
}

var (
	_ engine.Engine       = (*Engine)(nil)
	_ engine.Reaper       = (*Engine)(nil)
	_ engine.Validator    = (*Engine)(nil)
	_ engine.Reconfigurer = (*Engine)(nil)
	_ engine.Transcriber  = (*Engine)(nil)
)

// New returns an engine for opts. Errors: baton.ErrInvalid when the profile
// has no Command or Fresh template, or DataDir is blank.
func New(opts Options) (*Engine, error) {
	p := &opts.Profile
	if p.Command == "" || len(p.Fresh) == 0 {
		return nil, baton.Errorf(baton.ErrInvalid, "exec: profile %q needs a command and a fresh template", p.Name)
	}
	if opts.DataDir == "" {
		return nil, baton.Errorf(baton.ErrInvalid, "exec: a data directory is required")
	}
	p.Name = cmp.Or(p.Name, filepath.Base(p.Command))
	opts.StopGrace, opts.DeathSignal, opts.Clock, opts.Logger = proc.Defaults(opts.StopGrace, opts.DeathSignal, opts.Clock, opts.Logger)
	return &Engine{opts: opts, writers: map[baton.SessionID]*writer{}}, nil
}

// Validate implements engine.Validator: it checks the model, effort and
// permission mode against the profile. Errors: engine.ErrUnsupportedConfig.
func (e *Engine) Validate(cfg baton.EngineConfig) error { return e.opts.Profile.validate(cfg) }

// CanReconfigure implements engine.Reconfigurer: true when the profile says
// its CLI resumes a native session under another configuration, both
// configurations use the same engine and account, and the profile accepts
// to.
func (e *Engine) CanReconfigure(from, to baton.EngineConfig) bool {
	return e.opts.Profile.Reconfigure && len(e.opts.Profile.Resume) > 0 && from.SameAccount(to) && e.Validate(to) == nil
}

// TranscriptPath returns where session sid's transcript is (it may not
// exist yet): DataDir/transcripts/<sid>.jsonl, the id escaped for a file
// name.
func (e *Engine) TranscriptPath(sid baton.SessionID) string {
	return tlog.Path(e.opts.DataDir, sid)
}

// Start spawns the profile's command for req and returns at once; Ready
// confirms the session. The child runs in req.Dir, in its own process
// group, with BATON_LAUNCH_ID set to req.LaunchID (a fresh id when blank) and the
// parent-death signal set. The launch id must name this launch only (baton
// mints them from crypto/rand): the cleanup after the child's exit and
// ReapLaunch kill every process that carries it.
//
// With req.Admit the start is two-phase (see engine.StartRequest.Admit):
// the child is spawned as /bin/sh waiting on a pipe, already in its process
// group and carrying BATON_LAUNCH_ID, and Start calls Admit; on success the shell
// replaces itself with the agent (same pid), otherwise the child is killed
// and Start returns Admit's error once it is gone.
//
// Errors: engine.ErrUnsupportedConfig (the profile
// refuses the configuration, cannot resume, or the system is not Linux),
// baton.ErrInvalid (a resume without a native id), engine.ErrClosed,
// an error matching baton.ErrBusy (another engine or process writes the
// session's transcript), ctx's error, the error of the profile's LaunchExtra, or an
// error matching baton.ErrUnavailable when the spawn or the transcript fails. Nothing runs
// after an error.
func (e *Engine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	if err := proc.Precheck(ctx, "exec", &req, e.opts.Profile.validate); err != nil {
		return nil, err
	}
	l, err := e.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	p, err := e.reg.Start(func() (*process, error) {
		var w *writer
		if req.Session != "" {
			if w, err = e.acquireLocked(req.Session); err != nil {
				return nil, err
			}
		}
		p, err := e.spawn(req, l, w)
		if err != nil && w != nil {
			e.releaseLocked(req.Session, w)
		}
		return p, err
	})
	if err != nil {
		l.cleanup()
		return nil, err
	}
	go p.run()
	if req.Admit != nil {
		// The second phase: the agent runs only once Admit said yes.
		if err := p.Admit(ctx, req.Admit, p.started, nil); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// launch is what prepare builds for one spawn.
type launch struct {
	argv []string
	env  []string
	dir  string // private launch directory, "" when none
}

// cleanup removes the launch directory (os.RemoveAll of "" does nothing).
func (l *launch) cleanup() { _ = os.RemoveAll(l.dir) }

// prepare builds argv and environment and writes the launch's files.
func (e *Engine) prepare(ctx context.Context, req engine.StartRequest) (*launch, error) {
	prof := &e.opts.Profile
	cfg := req.Config.Normalize()
	// The values that become flags' arguments: never one a CLI reads as a
	// flag of its own, whoever called Start (see string).
	if err := cmp.Or(baton.CheckField("model", cfg.Model), baton.CheckField("reasoningEffort", cfg.ReasoningEffort),
		baton.CheckField("permissionMode", cfg.PermissionMode)); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	v := vars{
		"prompt": req.Prompt, "native_id": req.NativeID,
		"model": cfg.Model, "effort": cfg.ReasoningEffort, "permission": cfg.PermissionMode,
		"workspace": string(req.Workspace), "session": string(req.Session),
		"launch": string(req.LaunchID), "dir": req.Dir,
	}
	if c := req.Report; c != nil && req.Turn == transcript.ReportOnly {
		v["handoff"], v["attempt"], v["report_token"] = string(c.Handoff), strconv.Itoa(c.Attempt), c.Token.Reveal()
	}
	var extra Extra
	var err error
	if prof.LaunchExtra != nil {
		if extra, err = prof.LaunchExtra(ctx, req); err != nil {
			return nil, err
		}
	}
	l := &launch{}
	if promptFile := prof.namesPromptFile(extra.Flags); len(extra.Files) > 0 || promptFile {
		if err := l.writeFiles(filepath.Join(e.opts.DataDir, "launches"), v, extra.Files, promptFile, req.Prompt); err != nil {
			l.cleanup()
			return nil, baton.Errorf(baton.ErrUnavailable, "exec: %v", err)
		}
	}
	if l.argv, err = prof.argv(req, v, extra.Flags); err != nil {
		l.cleanup()
		return nil, err
	}
	l.env = proc.Env(e.opts.Env, req.LaunchID, v.expandAll(nil, prof.Env), extra.Env)
	return l, nil
}

// writeFiles writes the launch's files into a fresh private directory
// under root, and the prompt when prompt is set, naming their paths in v.
func (l *launch) writeFiles(root string, v vars, files map[string][]byte, prompt bool, text string) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(root, "launch-")
	if err != nil {
		return err
	}
	l.dir = dir
	for name, body := range files {
		v["file:"+name] = filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(v["file:"+name], body, 0o600); err != nil {
			return err
		}
	}
	if prompt {
		v["prompt_file"] = filepath.Join(dir, "prompt")
		return os.WriteFile(v["prompt_file"], []byte(text), 0o600)
	}
	return nil
}

// acquireLocked returns the session's writer, opening it if needed.
func (e *Engine) acquireLocked(sid baton.SessionID) (*writer, error) {
	// A writer is idle exactly when no launch holds it.
	if i := slices.Index(e.idle, sid); i >= 0 {
		e.idle = slices.Delete(e.idle, i, i+1)
	}
	w := e.writers[sid]
	if w == nil {
		tw, err := tlog.OpenSession("exec", e.opts.DataDir, sid)
		if err != nil {
			return nil, err
		}
		w = &writer{Writer: tw}
		e.writers[sid] = w
	}
	w.refs++
	return w, nil
}

func (e *Engine) releaseLocked(sid baton.SessionID, w *writer) {
	if w.refs--; w.refs > 0 {
		return
	}
	// Keep the newest idle writers open: the next launch of a session
	// usually follows soon (a resume, a handoff's target).
	e.idle = append(e.idle, sid)
	if len(e.idle) > maxIdleWriters {
		e.closeWriterLocked(e.idle[0])
		e.idle = slices.Delete(e.idle, 0, 1)
	}
}

// maxIdleWriters bounds the transcripts an engine keeps open (and locked)
// while no launch of their session runs.
const maxIdleWriters = 8

func (e *Engine) closeWriterLocked(sid baton.SessionID) {
	w := e.writers[sid]
	delete(e.writers, sid)
	if err := w.Close(); err != nil {
		e.opts.Logger.Warn("exec: closing a transcript", zap.String("session", string(sid)), zap.Error(err))
	}
}

func (e *Engine) release(p *process) {
	e.reg.Mu.Lock()
	defer e.reg.Mu.Unlock()
	e.reg.RemoveLocked(p)
	if p.w != nil {
		e.releaseLocked(p.req.Session, p.w)
	}
}

// Close stops every running launch (a confirmed stop each), waits for the
// engine's goroutines and closes the transcripts it keeps open (the last
// few sessions' stay open, and locked against other writers, between their
// launches); Start fails with engine.ErrClosed afterwards. Errors:
// ctx's (some launch still runs), or an error naming the launches whose
// stop was not confirmed. Safe to call more than once.
func (e *Engine) Close(ctx context.Context) error {
	return e.reg.Close(ctx, func(p *process) baton.LaunchID { return p.req.LaunchID }, func() {
		for _, sid := range e.idle {
			e.closeWriterLocked(sid)
		}
		e.idle = nil
	})
}

// writer is one session's transcript writer, shared by the session's
// launches (refs counts them: a launch keeps its reference until its exit
// sync is done).
type writer struct {
	*tlog.Writer
	refs int
}

// Transcript implements engine.Transcriber from session sid's transcript
// file (TranscriptPath): each range opens it, reads it through its offset
// index a batch of events at a time, and closes it, so it holds one batch
// in memory whatever the transcript's length and sees what a live launch
// appended until then. Every event carries the turn of the launch that
// wrote it. Errors: engine.ErrNoTranscript when the session has no
// transcript here, or the file system's; while ranging, ctx's,
// an error matching baton.ErrInternal (the transcript
// or its index does not hold what the other says), or the file system's.
func (e *Engine) Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	return tlog.Seq(ctx, e.TranscriptPath(sid), baton.Errorf(engine.ErrNoTranscript, "exec: no transcript of session %s", sid))
}
