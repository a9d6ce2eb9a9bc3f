package handoff

import (
	"context"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qmuntal/stateless"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

const (
	defaultLeaseTTL          = 30 * time.Second
	defaultGenerationTimeout = 5 * time.Minute
	defaultPollInterval      = time.Second
)

// Coordinator drives session transfers. It is the only writer of handoff
// rows: every transition fires the transfer machine inside one store
// transaction, and engine side effects (stop the source, resume it for a
// report-only turn, start the target) happen only after that transaction
// has committed; a late engine callback of another attempt is refused,
// never applied. Safe for concurrent use.
//
// While a transfer is pending its workspace is reserved: a write without
// the owner token is refused (session.Service.AssertWritable). Completion
// activates the target and moves the source's wakeups to it; a failure,
// Stop or restart restores the source. The target's briefing carries the
// record, the report and the conversation as the user chose (baton.Share),
// and is published under <workspace root>/.ai/handoffs/. Timeouts.Ready and
// the session service's StopTimeout (session.Options) bound every launch
// and stop; an unconfirmed stop is retried only by the process that drives
// the transfer (Timeouts.Lease).
type Coordinator struct {
	store      store.Store
	engines    engine.Registry
	svc        *session.Service
	sessions   supervisor // svc's
	given      given
	clock      clock.Clock
	log        *zap.Logger
	sm         *stateless.StateMachine
	id         string
	genTimeout time.Duration
	readyTime  time.Duration
	leaseTTL   time.Duration
	poll       time.Duration
	brief      Briefing // WithBriefing's, Build set
	observers  []func(Event)
	// incarnation is the store's Incarnation when it is exclusive
	// (workspace.Incarnation).
	incarnation string
	rejected    atomic.Uint64
	lateReports atomic.Uint64

	root context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	closed  bool
	drivers map[baton.HandoffID]*driver
	// stopping holds the stops this process is carrying out; true once
	// another claim of the same stop was refused (see claimStop).
	stopping map[baton.HandoffID]bool
	// took holds the pending handoffs whose reservation this Coordinator
	// took itself (not an earlier process under the same instance id):
	// Reconcile leaves them alone while it still holds them.
	// Each is followed (follow) for stop requests while it is held.
	took map[baton.HandoffID]context.CancelFunc
	wg   sync.WaitGroup
}

// Option configures a Coordinator.
type Option func(*Coordinator)

// given records, by name, the options New was given, so that one given
// twice is refused (baton.ErrInvalid) rather than the last silently
// winning.
type given struct {
	names []string
	err   error
}

// add records option name; the second time it records the conflict.
func (g *given) add(name string) {
	if slices.Contains(g.names, name) && g.err == nil {
		g.err = baton.Errorf(baton.ErrInvalid, "handoff.New: %s given twice", name)
	}
	g.names = append(g.names, name)
}

// Timeouts bound what a Coordinator waits for. A zero field keeps its
// default. See Timeouts in the package documentation.
type Timeouts struct {
	// Generation bounds a report-only turn (default 5 minutes).
	Generation time.Duration
	// Ready bounds how long a launch may take to confirm readiness
	// (default engine.DefaultReadyTimeout): every launch of a transfer
	// carries it to its engine (engine.StartRequest.ReadyTimeout), and a
	// target's is also counted from the commit that enters starting; past
	// it the target is stopped and the attempt fails. Ordinary starts
	// carry the session service's ReadyTimeout, and stops are bounded by
	// its StopTimeout (session.Options).
	Ready time.Duration
	// Lease is how long a reservation's runtime lease lasts without
	// renewal (default 30 seconds). The Coordinator renews the leases it
	// holds every third of it; Reconcile leaves another live process's
	// leases alone.
	Lease time.Duration
	// Poll is how often Watch and Wait read a store that does not notify
	// (it is not a store.Notifier), and how often a Stop sent to a process
	// that does not drive the transfer looks at it (default 1 second).
	Poll time.Duration
}

// WithTimeouts sets the Coordinator's timeouts (see Timeouts).
func WithTimeouts(t Timeouts) Option {
	return func(co *Coordinator) {
		co.given.add("WithTimeouts")
		co.genTimeout, co.readyTime, co.leaseTTL, co.poll = t.Generation, t.Ready, t.Lease, t.Poll
	}
}

// Briefing says how a transfer's target is briefed; a zero field keeps its
// default.
type Briefing struct {
	// Build builds the target's opening prompt from the transfer's records
	// (default: DefaultBriefing, which also reads the source engine's
	// transcript, when it keeps one). It runs after the transaction that
	// entered starting, before the target is launched; an error fails the
	// attempt. It must be deterministic for the same input.
	Build func(ctx context.Context, in BriefingInput) (string, error)
	// Limits bound the default briefing's sections and name what it
	// redacts besides the built-in token shapes (for example
	// Conversation.Secrets: the values of the host's API keys); Build gets
	// them as BriefingInput.Limits. Default: recap's defaults.
	Limits recap.HandoffLimits
	// HistoryTool names the tool a transfer's target can call to read the
	// source conversation (the MCP server's read_source_history, when the
	// target's launch is granted it): a briefing that does not include the
	// conversation points the target at it. Default: none.
	HistoryTool string
	// Facts gathers a transfer's facts beside the report (default: none):
	// it returns the facts of the workspace's root since the source session
	// started (or, without a source, since the transfer was created),
	// rendered as Markdown; facts.Func of package handoff/facts gathers git
	// state. It runs in the driver, outside any store transaction, just
	// before the transfer enters starting; what it returns is stored on the
	// handoff (Handoff.Facts) in that transition's commit and given to the
	// briefing. It must be bounded in time and size, and should return a
	// short honest line rather than nothing when it cannot tell.
	Facts func(ctx context.Context, root string, since time.Time) string
}

// WithBriefing sets how a transfer's target is briefed (see Briefing).
func WithBriefing(b Briefing) Option {
	return func(co *Coordinator) {
		co.given.add("WithBriefing")
		b.HistoryTool = strings.TrimSpace(b.HistoryTool)
		if b.Build == nil {
			b.Build = DefaultBriefing
		}
		co.brief = b
	}
}

// WithObserver registers fn to be called after every committed transition,
// in the goroutine that made it. fn must not block or call back into the
// Coordinator synchronously.
func WithObserver(fn func(Event)) Option {
	return func(co *Coordinator) { co.observers = append(co.observers, fn) }
}

// Event reports one committed transition.
type Event struct {
	// Trigger names the event of the transfer machine that fired (see
	// MachineGraph for every name).
	Trigger string
	Handoff store.Handoff
}

// New returns a Coordinator that launches engines through engines and
// the session service svc (made by session.New), and writes to svc's store.
// It shares svc, and so its table of running processes, with the caller,
// and uses its clock, logger and instance id (session.Options): the
// instance id names this process in reservation leases and launch
// records. On a shared store (PostgreSQL), give a process the same id
// across its restarts so that its Reconcile takes back its own leases at
// once; a different id waits for them to lapse. On a store one process
// holds alone (badgerstore) it is unnecessary: a lease written before the
// store was opened belongs to a dead process and is taken at once.
// Shutdown closes svc. Call Recover (or, on a store other processes
// share, Reconcile) once before serving: see Restart in the package
// documentation. Errors: baton.ErrInvalid for a nil service or registry,
// or a service not made by session.New, or an option given twice.
func New(svc *session.Service, engines engine.Registry, opts ...Option) (*Coordinator, error) {
	if svc == nil || engines == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "handoff.New: nil session service or engine registry")
	}
	sup, ok := workspace.Of(svc).(supervisor)
	if !ok {
		return nil, baton.Errorf(baton.ErrInvalid, "handoff.New: the session service was not made by session.New")
	}
	c := &Coordinator{
		store: sup.Store(), engines: engines, svc: svc, sessions: sup, brief: Briefing{Build: DefaultBriefing},
		drivers: map[baton.HandoffID]*driver{}, stopping: map[baton.HandoffID]bool{}, took: map[baton.HandoffID]context.CancelFunc{},
	}
	for _, o := range opts {
		o(c)
	}
	if c.given.err != nil {
		return nil, c.given.err
	}
	c.genTimeout = orDefault(c.genTimeout, defaultGenerationTimeout)
	c.readyTime = orDefault(c.readyTime, engine.DefaultReadyTimeout)
	c.leaseTTL = orDefault(c.leaseTTL, defaultLeaseTTL)
	c.poll = orDefault(c.poll, defaultPollInterval)
	c.incarnation = workspace.Incarnation(c.store)
	c.clock, c.log, c.id = sup.Clock(), sup.Logger(), sup.BaseID()
	c.sm = newMachine()
	c.root, c.stop = context.WithCancel(context.Background())
	sup.OnPressure(c.pressured)
	c.wg.Add(1)
	go c.renewLoop()
	return c, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Sessions returns the session service the Coordinator launches through.
func (c *Coordinator) Sessions() *session.Service { return c.svc }

func (c *Coordinator) observe(t machineTrigger, h store.Handoff) {
	if ce := c.log.Check(zap.InfoLevel, "handoff transition"); ce != nil {
		ce.Write(zap.String("handoff", string(h.ID)), zap.String("workspace", string(h.Workspace)),
			zap.String("trigger", string(t)), zap.String("state", string(h.State)), zap.Int("attempt", h.Attempt))
	}
	if len(c.observers) == 0 {
		return
	}
	ev := Event{Trigger: string(t), Handoff: public(h)}
	for _, fn := range c.observers {
		fn(ev)
	}
}

// live refuses a call with a nil context (ErrInvalidRequest) or once the
// Coordinator is shut down (session.ErrClosed, as its service is).
func (c *Coordinator) live(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return session.ErrClosed
	}
	return nil
}

// notFound maps a store miss to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return baton.Errorf(ErrInvalidRequest, "nil context")
	}
	return nil
}

// Errors returned by the Coordinator. Each is an *baton.Error: match it with
// errors.Is, or its code with baton.ErrorCode. The method that returns one
// says so in its documentation.
var (
	// ErrInvalidRequest: malformed input (request id, configuration, action,
	// report text, nil context). Nothing happened.
	ErrInvalidRequest = baton.NewError(baton.ErrInvalid, "invalid handoff request")
	// ErrIdempotencyMismatch: the request id was used before with another
	// request (another fingerprint).
	ErrIdempotencyMismatch = baton.NewError(baton.ErrConflict, "request id already used with a different request")
	// ErrTransferPending: another handoff is pending in the workspace.
	ErrTransferPending = baton.NewError(baton.ErrConflict, "another session transfer is pending in this workspace")
	// ErrSourceChanged: the request's source session is not the workspace's
	// current session any more.
	ErrSourceChanged = baton.NewError(baton.ErrConflict, "the source session is no longer the workspace's current session")
	// ErrNotFound: no such handoff in that workspace (a handoff of another
	// workspace is not found either).
	ErrNotFound = baton.NewError(baton.ErrNotFound, "handoff not found")
	// ErrTransferRunning: retry or skip while the transfer is still running.
	ErrTransferRunning = baton.NewError(baton.ErrConflict, "the transfer is still running")
	// ErrStopUnconfirmed: retry or skip while a stop was not confirmed: a
	// process may still run; Stop again first.
	ErrStopUnconfirmed = baton.NewError(baton.ErrConflict, "a stop was not confirmed; stop again before retrying")
	// ErrGenerationInactive: a report for a handoff that is not generating a
	// report (or not any more).
	ErrGenerationInactive = baton.NewError(baton.ErrConflict, "no report is being generated for this handoff")
	// ErrTokenRejected: a report with a token that is not the current
	// attempt's generation token.
	ErrTokenRejected = baton.NewError(baton.ErrConflict, "generation token rejected")
	// ErrReportConflict: a different report was already stored for this
	// attempt (the same text again is accepted).
	ErrReportConflict = baton.NewError(baton.ErrConflict, "a different report was already submitted")
)

// errNativeUnsupported: a native-path request (Request.Native) whose
// target engine cannot carry the source's native session; callers match
// its code, baton.ErrUnsupported.
var errNativeUnsupported = baton.NewError(baton.ErrUnsupported, "the target engine cannot carry the source's native session")

// errStaleAttempt refuses an engine callback of an attempt that is not the
// current one, or that arrived after a Stop was requested: never applied.
var errStaleAttempt = baton.NewError(baton.ErrStale, "callback of a stale attempt refused")

// supervisor is what the Coordinator needs of its session service beyond
// the service's public API: the table of processes both launch through,
// the reaping of earlier processes' launches and the records of ends.
// Package session hands it over through the workspace.Link its Service
// embeds, so neither package exports it.
type supervisor interface {
	// Launch starts an engine process in a workspace under the
	// workspace's rules (one process at most; the owner's fence checked
	// before the spawn and again after it).
	Launch(ctx context.Context, req workspace.LaunchRequest) (engine.Process, error)
	// Halt stops the workspace's process and records its end.
	Halt(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error)
	// HaltDeferred is Halt leaving the end to the caller's transaction.
	HaltDeferred(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, *workspace.End, error)
	// ExitEnd is the end of a process launched with KeepRecord.
	ExitEnd(launch baton.LaunchID, st engine.ExitStatus) *workspace.End
	// RecordEnd records the end of a session's process in a commit of its
	// own.
	RecordEnd(id baton.SessionID, launch baton.LaunchID, st engine.ExitStatus)
	// CloseUnspawned closes, inside tx, handoff h's launches the service
	// recorded but is not running.
	CloseUnspawned(tx store.Tx, ws baton.WorkspaceID, h baton.HandoffID) error
	// Reap confirms gone the live launches of earlier processes.
	Reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool) (workspace.ReapResult, error)
	// Reconcile reaps every earlier launch and ends the rows a crash left
	// running; it returns what it reaped and how many rows it ended.
	Reconcile(ctx context.Context) (workspace.ReapResult, int, error)
	// Conversation is a session's conversation, for a briefing.
	Conversation(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], string, error)
	// InstanceID and Host are what the service writes in launch records.
	InstanceID() string
	Host() string
	// Store is the store the service writes to.
	Store() store.Store
	// Clock, Logger and BaseID are the service's options
	// (BaseID its instance id without the suffix of its own): a
	// Coordinator sharing the service uses them.
	Clock() clock.Clock
	Logger() *zap.Logger
	BaseID() string
	// OnPressure sets the hook that creates the context-pressure transfer
	// a settled turn made due.
	OnPressure(fn func(ws baton.WorkspaceID, sid baton.SessionID))
}

// public is the row h as a Coordinator returns it: the hash of the
// generation token left out (zero), its history a copy of its own.
func public(h store.Handoff) store.Handoff {
	h.GenerationToken = baton.TokenHash{}
	h.History = slices.Clone(h.History)
	return h
}
