package engine

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/transcript"
)

// Errors an Engine or Process returns. Match with errors.Is.
var (
	// ErrUnknownEngine: no engine is registered under the configuration's
	// engine name.
	ErrUnknownEngine = baton.NewError(baton.ErrUnsupported, "engine: unknown engine")
	// ErrUnsupportedConfig: the engine does not offer that model, effort or
	// permission mode.
	ErrUnsupportedConfig = baton.NewError(baton.ErrUnsupported, "engine: unsupported configuration")
	// ErrSessionMissing: a resume named a native session the engine cannot
	// find ("No conversation found with session ID ..."). The continuation
	// planner retries once as a fresh briefed session on it.
	ErrSessionMissing = baton.NewError(baton.ErrNotFound, "engine: native session not found")
	// ErrAuth: the engine refused the credentials. Never retried.
	ErrAuth = baton.NewError(baton.ErrUnavailable, "engine: authentication failed")
	// ErrReadyRejected: the process started but its first turn was not
	// accepted.
	ErrReadyRejected = baton.NewError(baton.ErrUnavailable, "engine: readiness rejected")
	// ErrExitedBeforeReady: the process ended before readiness was
	// confirmed. Exit tells how.
	ErrExitedBeforeReady = baton.NewError(baton.ErrUnavailable, "engine: process exited before ready")
	// ErrClosed: Start was called on an engine after its Close.
	ErrClosed = baton.NewError(baton.ErrUnavailable, "engine: engine closed")
)

// Mode says whether a start is fresh or resumes a native session.
type Mode string

const (
	Fresh  Mode = "fresh"  // a new native session
	Resume Mode = "resume" // the native session StartRequest.NativeID
)

// DefaultReadyTimeout is how long a launch may take to confirm readiness
// when nothing says otherwise (StartRequest.ReadyTimeout zero): the one
// default of every engine and of baton's own waits.
const DefaultReadyTimeout = 5 * time.Minute

// StartRequest asks an engine to start or resume a session.
type StartRequest struct {
	Workspace baton.WorkspaceID
	Session   baton.SessionID
	Config    baton.EngineConfig
	Mode      Mode
	// NativeID is the native session to resume (Mode Resume only).
	NativeID string
	// Turn says what the first turn is for: transcript.Normal, an ordinary
	// turn with the session's full tool set, or transcript.ReportOnly, one
	// turn that may only read and submit a handoff report (the engine must
	// scope the tools to read-only plus report submission; its events are
	// not conversation). An engine that records a transcript marks each
	// event with the turn of the launch that wrote it.
	Turn transcript.Turn
	// Prompt is the opening prompt of the turn.
	Prompt string
	// Dir is the working directory, when the workspace has one.
	Dir string
	// Owner is the workspace reservation's owner token when one is held.
	// An engine host that guards launches checks it; baton's own launches
	// always carry it.
	Owner baton.Token
	// Report carries the scoped credentials of a report-only turn.
	Report *ReportCredentials
	// Attempt is the handoff attempt this start belongs to (0 outside a
	// transfer); every callback of the process is applied only to it.
	Attempt int
	// ReadyTimeout is how long the launch may take to confirm readiness,
	// counted from Start; zero means DefaultReadyTimeout. An engine that
	// times readiness itself (the exec engine does) makes Ready fail with
	// ErrReadyRejected and stops the launch once it passes. baton sets it
	// on every launch it makes (see package handoff, Timeouts) and waits
	// no longer than that itself.
	ReadyTimeout time.Duration
	// LaunchID names this launch; it was recorded durably before Start was
	// called. An engine that is a Reaper marks every process of the launch
	// with it (the exec engine: an environment variable every descendant
	// inherits, and the process group) so that ReapLaunch finds them after
	// the host that spawned them crashed.
	LaunchID baton.LaunchID
	// Admit, when set, asks for a two-phase start. An engine that supports
	// it spawns the process held: it exists, carries LaunchID as a Reaper
	// expects, and can be stopped, but the agent has not begun to run. The
	// engine then calls Admit once, before Start returns, and lets the
	// agent run only if Admit returns nil. When Admit fails (or ctx ends
	// first), the engine kills the held process, waits until it is gone,
	// and returns Admit's error from Start (wrapped or not: errors.Is
	// matches it): no agent ran. baton's Admit commits the launch's
	// admission only while the reservation's epoch and owner still hold
	// and no reap has closed the launch's record, so a host frozen between
	// its fenced commit and the spawn never runs a fenced-out agent when it
	// wakes. An engine without the capability never calls Admit; the caller
	// learns so from Start returning without the call, and re-checks the
	// fence after the start instead (best effort). Admit must not be
	// called after Start returned.
	Admit func(ctx context.Context) error
}

// ReportCredentials let a report-only turn submit its report, and nothing
// else: the handoff, the attempt, and a token valid for that attempt only.
type ReportCredentials struct {
	Workspace baton.WorkspaceID
	Handoff   baton.HandoffID
	Attempt   int
	Token     baton.Token
}

// Engine starts agent processes.
type Engine interface {
	// Start launches a process for req. A returned Process proves only that
	// something was spawned; call Ready to learn whether the session really
	// accepted its first turn. Start should return as soon as the process
	// is spawned (baton calls it under the workspace's launch lock, which a
	// concurrent Stop waits for) and must honour ctx. Errors: ErrUnsupportedConfig, ErrAuth,
	// ErrSessionMissing (resume of an unknown native id), or an
	// error matching baton.ErrUnavailable for a spawn failure.
	Start(ctx context.Context, req StartRequest) (Process, error)
}

// StopOutcome is a confirmed (or explicitly unconfirmed) stop result.
type StopOutcome string

const (
	Stopped    StopOutcome = "stopped"     // the process was running and is now gone
	NotRunning StopOutcome = "not-running" // it had already ended
	Timeout    StopOutcome = "timeout"     // asked, but not confirmed in time
	Failed     StopOutcome = "failed"      // the stop itself failed
)

// Confirmed reports whether the process is known to be gone.
func (o StopOutcome) Confirmed() bool { return o == Stopped || o == NotRunning }

// ExitStatus says how a process ended.
type ExitStatus struct {
	// Code is the exit code (0 clean).
	Code int
	// Err is set when the process ended with an error (crash, kill, spawn
	// failure after start).
	Err error
	// Stopped reports the process ended because Stop asked it to.
	Stopped bool
	// NativeID is the native session id of a process whose first turn
	// finished cleanly before Ready confirmed it (it minted a session all
	// the same); empty otherwise (Ready already returned it, or there is
	// none).
	NativeID string
	// Usage is the context usage the turn reported as of its last request
	// to the model (see Usage), for a turn that ended any way, stopped
	// included; the zero Usage when the engine reports none or the turn
	// made no request.
	Usage Usage
	At    time.Time
}

// Clean reports a zero exit code and no error.
func (e ExitStatus) Clean() bool { return e.Code == 0 && e.Err == nil }

// Process is one running agent process.
type Process interface {
	// Ready blocks until the native session accepted its first turn and
	// returns its native id; ErrReadyRejected or ErrExitedBeforeReady
	// otherwise, or ctx's error.
	Ready(ctx context.Context) (nativeID string, err error)
	// Stop asks the process to end and reports a confirmed outcome. It is
	// safe to call more than once and concurrently with Ready.
	Stop(ctx context.Context) (StopOutcome, error)
	// Done is closed when the process has ended.
	Done() <-chan struct{}
	// Exit reports how the process ended; valid once Done is closed.
	Exit() ExitStatus
	// Actual reports what the agent has said so far that it really runs
	// (the zero Actual when it said nothing, or the engine cannot tell);
	// safe to call at any time, concurrently with Ready. baton records it
	// on the session's row (store.Session.ActualModel and EngineVersion)
	// once Ready returned, and again if the first turn ended before
	// readiness.
	Actual() Actual
}

// Actual is what a process reported it really runs, as the agent said so
// itself: an agent CLI may send its API another model than the
// configuration asked for (an alias, or a model it maps to a newer one).
// An empty field was not reported.
type Actual struct {
	// Model is the model the agent says it uses.
	Model string
	// Version is the agent's own version (the agent CLI's).
	Version string
}

// Reaper is an optional Engine capability: it finds every live process of
// a launch, even one whose host died (an orphan under PID 1), stops the
// whole tree, and confirms it gone. baton's Reconcile reaps every launch a
// dead process left live; a launch whose reap is not confirmed keeps its
// workspace held (no ordinary start, no transfer released). An engine whose
// processes can outlive the host that spawned them (any subprocess engine)
// must be a Reaper: for an engine that is not, baton assumes its processes
// died with their host (true of in-process engines).
type Reaper interface {
	// ReapLaunch stops every process of launch id and reports a confirmed
	// outcome: Stopped (some ran and are gone), NotRunning (none ran; a
	// zombie counts as gone), Timeout or Failed (not confirmed). Safe to
	// call more than once.
	ReapLaunch(ctx context.Context, id baton.LaunchID) (StopOutcome, error)
}

// Reconfigurer is an optional Engine capability: the engine can carry a
// native session to another configuration itself (resume the same native
// conversation under another model). A transfer that asks for the native
// path (Request.Native) needs it.
type Reconfigurer interface {
	// CanReconfigure reports whether a native session minted under from
	// can be resumed under to.
	CanReconfigure(from, to baton.EngineConfig) bool
}

// Validator is an optional Engine capability: it checks a configuration
// before anything is reserved or stopped. Without it every configuration is
// accepted and an unsupported one fails at Start.
type Validator interface {
	Validate(cfg baton.EngineConfig) error
}

// Activity is a snapshot of what a session is doing. A Process may report
// it through an Activity() Activity method (the exec, acp and enginetest
// processes do); package host reads it from the sessions it holds.
type Activity struct {
	Turn       bool // an agent turn runs
	Tool       bool // a tool or shell command runs
	Compaction bool // context compaction runs
	Queued     int  // queued session work items
	// WakeSources counts durable wake sources (persistent monitors,
	// scheduled continuations). They resume from the session file and never
	// hold a generation handoff.
	WakeSources int
}

// Registry maps engine names to engines. It is itself an Engine that
// dispatches on StartRequest.Config.Engine, so a Registry is what a
// session service or a coordinator takes when it runs more than one engine:
//
//	engine.Registry{"claude": claude, "codex": codex}
//
// A name is looked up as EngineConfig.Normalize leaves it (white space
// trimmed, case kept); a nil engine counts as absent. Build it before use
// and do not change it afterwards: it is then safe for concurrent use.
type Registry map[string]Engine

// Validate checks that cfg is well formed, names a registered engine, and,
// when that engine is a Validator, that the engine accepts it. Errors:
// baton.ErrInvalid (malformed), ErrUnknownEngine, ErrUnsupportedConfig.
func (r Registry) Validate(cfg baton.EngineConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.Normalize()
	e := r[cfg.Engine]
	if e == nil {
		return baton.Errorf(ErrUnknownEngine, "%q", cfg.Engine)
	}
	if v, ok := e.(Validator); ok {
		return v.Validate(cfg)
	}
	return nil
}

// Start dispatches to the engine named by req.Config.Engine.
func (r Registry) Start(ctx context.Context, req StartRequest) (Process, error) {
	e := r[strings.TrimSpace(req.Config.Engine)]
	if e == nil {
		return nil, baton.Errorf(ErrUnknownEngine, "%q", req.Config.Engine)
	}
	return e.Start(ctx, req)
}

// ErrNoTranscript: the engine holds no transcript of the session (it never
// ran it here, or the transcript is gone). It matches baton.ErrNotFound.
var ErrNoTranscript = baton.NewError(baton.ErrNotFound, "engine: no transcript of the session")

// Transcriber is an optional Engine capability: it reads back, from its own
// records, the conversation of a session it ran. The briefings of a
// transfer's target and of a fresh continuation replay it (bounded and
// redacted by package recap); without the capability they say that the
// conversation was not included.
type Transcriber interface {
	// Transcript returns the events of session sid, oldest first, each
	// marked with the turn it belongs to (transcript.Normal, or
	// transcript.ReportOnly for the prompt and answer of a report-only
	// turn). The sequence reads lazily
	// and in bounded batches, so ranging over a long transcript never
	// holds it whole; it may be ranged over more than once, each time from
	// the start. It yields a non-nil error at most once, as its last pair:
	// ctx's error, or a read error (the events before it were read
	// correctly). Errors: ErrNoTranscript when the engine holds none for
	// sid.
	Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error)
}

// Usage is how full a session's context window is, as the engine reports
// it after a turn (ExitStatus.Usage). It is what the model had in context
// at the turn's last request: that request's whole input, cached or not
// (for Claude Code: input_tokens + cache_creation_input_tokens +
// cache_read_input_tokens of the last assistant message of the main
// conversation; for Codex: the input_tokens of the last request's
// token_count event). The last request's output is not counted: it enters
// the context as input of the next request. Neither is a sum over the
// turn: a turn with a tool loop makes several requests, and each resends
// the conversation so far.
//
// The zero Usage means the engine reported none: an engine that cannot
// tell (or a turn that made no request before it ended) leaves both fields
// zero, and a caller must treat that as unknown, never as an empty
// context.
type Usage struct {
	// Tokens is the number of tokens in context as of the turn's last
	// request; 0 when the engine reported none.
	Tokens int64
	// Window is the size of the model's context window in tokens, as the
	// engine (or its configuration) says; 0 when unknown. Tokens may be
	// reported without it.
	Window int64
}
