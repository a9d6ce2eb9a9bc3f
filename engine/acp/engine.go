package acp

import (
	"cmp"
	"context"
	"errors"
	"iter"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
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

// permissionModes are the permission modes an Engine accepts (see
// Permission): the empty mode is "default".
var permissionModes = []string{"default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"}

// Options configure an Engine.
type Options struct {
	// Name names the agent in transcripts and errors; empty means the
	// command's base name.
	Name string
	// Command is the agent's executable (a path, or a name looked up on
	// PATH), Args its arguments: the command line that speaks ACP on its
	// standard input and output. Required: Command.
	Command string
	Args    []string
	// Env is the base environment of every agent process; nil means the
	// host's environment at each Start. Any BATON_LAUNCH_ID entry in it is
	// replaced.
	Env []string
	// DataDir holds the transcripts (DataDir/transcripts). Required.
	DataDir string
	// Models and Efforts list the models and reasoning efforts Validate
	// accepts; nil accepts any (the agent refuses an unknown one at the
	// start, and readiness fails).
	Models, Efforts []string
	// Launch, when set, gives each launch what only its request decides:
	// the MCP servers of its session, the tools the permission policy
	// allows besides the read-only ones, and environment entries. An
	// error fails Start before anything is spawned.
	Launch func(ctx context.Context, req engine.StartRequest) (Launch, error)
	// Permission answers the agent's permission requests; nil means
	// Permission (the package's policy).
	Permission func(req engine.StartRequest, allow []string, p sdk.RequestPermissionRequest) bool
	// StopGrace bounds each step of a stop: the wait after session/cancel
	// for the turn's answer (then SIGTERM to the process group), and the
	// wait after SIGTERM (then SIGKILL), also once a turn ended. Zero
	// means 5 s, negative SIGKILL at once.
	StopGrace time.Duration
	// DeathSignal is what the kernel sends an agent when its host dies
	// (Linux's parent-death signal); zero means SIGKILL.
	DeathSignal syscall.Signal
	// Clock times readiness timeouts and stop graces; nil means clock.Real.
	Clock clock.Clock
	// Logger receives debug lines about launches; nil means zap.NewNop.
	Logger *zap.Logger
}

// Launch is what Options.Launch gives one launch.
type Launch struct {
	// MCPServers are passed in session/new or session/load: baton's
	// report server for a report-only turn, with the turn's credentials.
	// An HTTP server needs the agent's mcpCapabilities.http.
	MCPServers []sdk.McpServer
	// Allow names tools the permission policy allows in this turn
	// besides the read-only ones (see Permission).
	Allow []string
	// Env is added to the agent's environment.
	Env []string
}

// Engine is an engine.Engine over an ACP agent command line. It is also an
// engine.Reaper, an engine.Validator and an engine.Transcriber. Safe for
// concurrent use.
type Engine struct {
	opts Options
	reg  proc.Launches[*process]
}

var (
	_ engine.Engine      = (*Engine)(nil)
	_ engine.Reaper      = (*Engine)(nil)
	_ engine.Validator   = (*Engine)(nil)
	_ engine.Transcriber = (*Engine)(nil)
)

// New returns an engine for opts. Errors: baton.ErrInvalid when Command or
// DataDir is blank.
func New(opts Options) (*Engine, error) {
	if strings.TrimSpace(opts.Command) == "" {
		return nil, baton.Errorf(baton.ErrInvalid, "acp: a command is required")
	}
	if opts.DataDir == "" {
		return nil, baton.Errorf(baton.ErrInvalid, "acp: a data directory is required")
	}
	opts.Name = cmp.Or(opts.Name, filepath.Base(opts.Command))
	opts.StopGrace, opts.DeathSignal, opts.Clock, opts.Logger = proc.Defaults(opts.StopGrace, opts.DeathSignal, opts.Clock, opts.Logger)
	if opts.Permission == nil {
		opts.Permission = Permission
	}
	return &Engine{opts: opts}, nil
}

// Validate implements engine.Validator: the model and effort against
// Options.Models and Options.Efforts, the permission mode against those
// the package knows ("default", "acceptEdits", "plan", "dontAsk",
// "bypassPermissions"; the empty mode is "default"). It cannot know what the agent advertises: an agent
// without the loadSession capability cannot resume a session, so it cannot
// write a transfer's report either (the report-only turn resumes the
// source): transfers from it must run without one (no GenerateSummary),
// and its continuations start fresh with a briefing. Errors:
// engine.ErrUnsupportedConfig.
func (e *Engine) Validate(cfg baton.EngineConfig) error {
	cfg, name := cfg.Normalize(), "acp: "+e.opts.Name
	return errors.Join(proc.Accept(name, "model", cfg.Model, e.opts.Models), proc.Accept(name, "reasoning effort", cfg.ReasoningEffort, e.opts.Efforts),
		proc.Accept(name, "permission mode", cfg.PermissionMode, permissionModes))
}

// TranscriptPath returns where session sid's transcript is (it may not
// exist yet): DataDir/transcripts/<sid>.jsonl, the id escaped for a file
// name, in the format of package exec.
func (e *Engine) TranscriptPath(sid baton.SessionID) string {
	return tlog.Path(e.opts.DataDir, sid)
}

// Transcript implements engine.Transcriber from session sid's transcript
// file (TranscriptPath), read in bounded batches. Errors:
// engine.ErrNoTranscript when the session has none here, or the file
// system's; while ranging, ctx's or the file system's.
func (e *Engine) Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	return tlog.Seq(ctx, e.TranscriptPath(sid), baton.Errorf(engine.ErrNoTranscript, "acp: no transcript of session %s", sid))
}

// Start spawns the agent for req and returns at once; Ready confirms the
// session. The agent runs in req.Dir (the workspace root; the host's
// working directory when blank, since ACP needs an absolute one), in its
// own process group, with BATON_LAUNCH_ID=<launch id> in its environment
// and the parent-death signal set. The conversation (initialize,
// session/new or session/load, session/prompt) runs on the process's own
// goroutine. With req.Admit the start is two-phase, as in package exec: a
// shell holds the launch until Admit returns nil, and the agent never runs
// otherwise.
//
// Errors: engine.ErrUnsupportedConfig (Validate refuses the configuration,
// or the system is not Linux), baton.ErrInvalid (a resume without a native
// id), engine.ErrClosed, an error matching baton.ErrBusy (another launch
// writes the session's transcript), ctx's, Admit's or Options.Launch's
// error, or an error matching baton.ErrUnavailable when the spawn or the transcript fails.
// Nothing runs after an error.
func (e *Engine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	err := proc.Precheck(ctx, "acp", &req, func(cfg baton.EngineConfig) error {
		if err := e.Validate(cfg); err != nil || req.Mode != engine.Resume || req.NativeID != "" {
			return err
		}
		return baton.Errorf(baton.ErrInvalid, "acp: a resume needs a native id")
	})
	if err != nil {
		return nil, err
	}
	// filepath.Abs of "" is the host's working directory.
	dir, err := filepath.Abs(req.Dir)
	if err != nil {
		return nil, baton.Errorf(baton.ErrUnavailable, "acp: %v", err)
	}
	var l Launch
	if e.opts.Launch != nil {
		if l, err = e.opts.Launch(ctx, req); err != nil {
			return nil, err
		}
	}
	p, err := e.reg.Start(func() (*process, error) { return e.spawn(req, dir, l) })
	if err != nil {
		return nil, err
	}
	go p.wait()
	if req.Admit == nil {
		p.begin()
	} else if err := p.Admit(ctx, req.Admit, p.begin, func() { close(p.convDone) }); err != nil {
		// The second phase (see engine.StartRequest.Admit) refused.
		return nil, err
	}
	return p, nil
}

// ReapLaunch implements engine.Reaper: it stops every live process of
// launch id, whichever host spawned it (an orphan of a crashed host
// included), and confirms them gone, exactly as package exec's does (the
// environment entry, the process groups, start times checked before each
// signal; SIGTERM, SIGKILL after Options.StopGrace or when ctx ends).
// Outcomes: engine.Stopped, engine.NotRunning, engine.Timeout with ctx's
// error, engine.Failed with an error (the process table could not be read,
// or a blank id). Safe to call more than once and concurrently.
func (e *Engine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	return proc.ReapLaunch(ctx, "acp", e.opts.Clock, id, e.opts.StopGrace)
}

// Close stops every running launch (a confirmed stop each) and waits for
// the engine's goroutines; Start fails with engine.ErrClosed afterwards. Errors:
// ctx's (some launch still runs), or an error naming the launches whose
// stop was not confirmed. Safe to call more than once.
func (e *Engine) Close(ctx context.Context) error {
	return e.reg.Close(ctx, func(p *process) baton.LaunchID { return p.req.LaunchID }, nil)
}

// HTTPServer is the MCP server at url, named name, as session/new and
// session/load take it, with header's fields sent on every request (an
// MCP server's credentials: mcpserver.Access.Header gives baton's). The
// agent needs mcpCapabilities.http to use it.
func HTTPServer(name, url string, header http.Header) sdk.McpServer {
	s := &sdk.McpServerHttpInline{Type: "http", Name: name, Url: url, Headers: []sdk.HttpHeader{}}
	for _, k := range slices.Sorted(maps.Keys(header)) {
		for _, v := range header[k] {
			s.Headers = append(s.Headers, sdk.HttpHeader{Name: k, Value: v})
		}
	}
	return sdk.McpServer{Http: s}
}
