package handoff

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/qmuntal/stateless"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff/internal/mutant"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Defaults.
const (
	DefaultGenerationTimeout = 5 * time.Minute
	DefaultLeaseTTL          = 30 * time.Second
	// MaxReportChars bounds a report, in characters (runes) after trimming.
	MaxReportChars = 24_000
)

// Coordinator drives session transfers. It is the only writer of handoff
// rows: every transition fires the transfer machine inside one store
// transaction, and engine side effects happen only after that transaction
// has committed. Safe for concurrent use.
type Coordinator struct {
	store      store.Store
	engines    *engine.Registry
	sessions   *session.Service
	clock      clock.Clock
	log        *zap.Logger
	sm         *stateless.StateMachine
	id         string
	genTimeout time.Duration
	leaseTTL   time.Duration
	briefing   Briefing
	observers  []func(Event)
	bugs       mutant.Bugs

	root context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	closed  bool
	drivers map[baton.HandoffID]*driver
	wg      sync.WaitGroup
}

// Option configures a Coordinator.
type Option func(*Coordinator)

// WithClock sets the time source (default: the wall clock). It is also
// given to the session service the Coordinator creates.
func WithClock(c clock.Clock) Option { return func(co *Coordinator) { co.clock = c } }

// WithLogger sets the logger (default: zap.NewNop()).
func WithLogger(l *zap.Logger) Option { return func(co *Coordinator) { co.log = l } }

// WithSessions shares an existing session service (and so its table of
// running processes) instead of creating one. It must use the same store.
func WithSessions(s *session.Service) Option { return func(co *Coordinator) { co.sessions = s } }

// WithGenerationTimeout bounds a report-only turn (default 5 minutes).
func WithGenerationTimeout(d time.Duration) Option {
	return func(co *Coordinator) { co.genTimeout = d }
}

// WithInstanceID names this coordinator process in reservation leases
// (default: a random id). Give a process the same id across its restarts
// so that its Reconcile takes back its own leases at once; a different id
// waits for them to lapse.
func WithInstanceID(id string) Option { return func(co *Coordinator) { co.id = id } }

// WithLeaseTTL sets how long a reservation's runtime lease lasts without
// renewal (default 30 s). The Coordinator renews the leases it holds every
// third of it; Reconcile leaves another live process's leases alone.
func WithLeaseTTL(d time.Duration) Option { return func(co *Coordinator) { co.leaseTTL = d } }

// WithBriefing sets how the target's opening prompt is built (default:
// DefaultBriefing, which needs nothing but the records).
func WithBriefing(b Briefing) Option { return func(co *Coordinator) { co.briefing = b } }

// WithObserver registers fn to be called after every committed transition,
// in the goroutine that made it. fn must not block or call back into the
// Coordinator synchronously.
func WithObserver(fn func(Event)) Option {
	return func(co *Coordinator) { co.observers = append(co.observers, fn) }
}

// WithMutants plants bugs in the Coordinator. It exists so that baton's
// own tests can prove the property harness catches them; the type is
// internal, so outside baton the only value is the zero one, which plants
// nothing.
func WithMutants(b mutant.Bugs) Option { return func(co *Coordinator) { co.bugs = b } }

// Event reports one committed transition.
type Event struct {
	Trigger Trigger
	Handoff Handoff
}

// New returns a Coordinator over st that launches engines through engines.
// Call Reconcile once before serving when the store may hold handoffs of an
// earlier process. Errors: baton.ErrInvalid for a nil store or registry, or
// a session service over another store.
func New(st store.Store, engines *engine.Registry, opts ...Option) (*Coordinator, error) {
	if st == nil || engines == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "handoff.New: nil store or engine registry")
	}
	c := &Coordinator{
		store: st, engines: engines, clock: clock.Real{}, log: zap.NewNop(),
		id: ids.New("coord"), genTimeout: DefaultGenerationTimeout, leaseTTL: DefaultLeaseTTL,
		briefing: DefaultBriefing, drivers: map[baton.HandoffID]*driver{},
	}
	for _, o := range opts {
		o(c)
	}
	if c.clock == nil {
		c.clock = clock.Real{}
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.genTimeout <= 0 {
		c.genTimeout = DefaultGenerationTimeout
	}
	if c.leaseTTL <= 0 {
		c.leaseTTL = DefaultLeaseTTL
	}
	if c.sessions == nil {
		s, err := session.New(st, engines, session.WithClock(c.clock), session.WithLogger(c.log))
		if err != nil {
			return nil, err
		}
		c.sessions = s
	} else if c.sessions.Store() != st {
		return nil, baton.Errorf(baton.ErrInvalid, "handoff.New: session service uses another store")
	}
	c.sm = newMachine()
	c.root, c.stop = context.WithCancel(context.Background())
	c.wg.Add(1)
	go c.renewLoop()
	return c, nil
}

// Sessions returns the session service the Coordinator launches through.
func (c *Coordinator) Sessions() *session.Service { return c.sessions }

// InstanceID returns the id this Coordinator writes in reservation leases.
func (c *Coordinator) InstanceID() string { return c.id }

// Graph returns the transfer machine as Graphviz DOT and Mermaid.
func (c *Coordinator) Graph() Graph { return Graph{DOT: c.sm.ToGraph(), Mermaid: mermaid()} }

func (c *Coordinator) observe(t Trigger, h store.Handoff) {
	if ce := c.log.Check(zap.InfoLevel, "handoff transition"); ce != nil {
		ce.Write(zap.String("handoff", string(h.ID)), zap.String("workspace", string(h.Workspace)),
			zap.String("trigger", string(t)), zap.String("state", string(h.State)), zap.Int("attempt", h.Attempt))
	}
	if len(c.observers) == 0 {
		return
	}
	ev := Event{Trigger: t, Handoff: public(h)}
	for _, fn := range c.observers {
		fn(ev)
	}
}

func (c *Coordinator) live() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	return nil
}

func handoffID(s string) baton.HandoffID { return baton.HandoffID(s) }

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

// Create requests a session transfer and returns the handoff as committed.
// The source's engine is stopped after the row is written; the rest of the
// transfer runs in the background (see Get, Current, WithObserver).
//
// Replaying a request id with the same fingerprint returns the existing
// handoff as it is now, in any state, with no side effect: Create is safe to
// retry. Errors (nothing is stopped or reserved on any of them):
// ErrInvalidRequest (malformed; also wraps engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig for a target the engines do not offer),
// ErrNotFound (workspace), ErrIdempotencyMismatch, ErrWorkspaceArchived,
// ErrTransferPending, ErrSourceChanged, ErrClosed, and the store's errors.
func (c *Coordinator) Create(ctx context.Context, req Request) (Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return Handoff{}, err
	}
	if err := c.live(); err != nil {
		return Handoff{}, err
	}
	req = req.normalized()
	if err := req.validate(); err != nil {
		return Handoff{}, err
	}
	in := input{trigger: TriggerCreate, req: req, id: ids.New("hof"), fp: req.Fingerprint()}
	h, f, err := c.apply(ctx, "", in, c.createCheck(req, in.fp))
	if errors.Is(err, store.ErrDuplicate) {
		// A concurrent Create won the race for the request id or the
		// pending slot; run the checks again to answer as it would have.
		h, f, err = c.apply(ctx, "", in, c.createCheck(req, in.fp))
	}
	var rep *replayed
	if errors.As(err, &rep) {
		return public(rep.h), nil
	}
	if err != nil {
		return Handoff{}, err
	}
	c.startDriver(h, f.owner)
	return public(h), nil
}

// replayed aborts Create's transaction when the request id was seen with the
// same fingerprint: the existing row is returned, nothing is written.
type replayed struct{ h store.Handoff }

func (r *replayed) Error() string { return "handoff: replay of " + string(r.h.ID) }

// createCheck applies Create's guards in the order that makes an exact replay
// succeed whatever has changed since.
func (c *Coordinator) createCheck(req Request, fp string) func(store.Tx, store.Handoff) error {
	return func(tx store.Tx, _ store.Handoff) error {
		ws, err := tx.GetWorkspace(req.Workspace)
		if err != nil {
			return baton.Errorf(ErrNotFound, "workspace %s", req.Workspace)
		}
		prev, err := tx.HandoffByRequest(req.Workspace, req.RequestID)
		switch {
		case err == nil && (prev.Fingerprint == fp || c.bugs.Has(mutant.ReplayAnyFingerprint)):
			return &replayed{h: prev}
		case err == nil:
			return baton.Errorf(ErrIdempotencyMismatch, "request id %q", req.RequestID)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if ws.Archived {
			return ErrWorkspaceArchived
		}
		if p, err := tx.PendingHandoff(req.Workspace); err == nil {
			return baton.Errorf(ErrTransferPending, "handoff %s is %s", p.ID, p.State)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if req.SourceSession != ws.CurrentSession {
			return baton.Errorf(ErrSourceChanged, "current session is %q", ws.CurrentSession)
		}
		if err := c.engines.Validate(req.Target); err != nil {
			return fmt.Errorf("%w: target: %w", ErrInvalidRequest, err)
		}
		return nil
	}
}
