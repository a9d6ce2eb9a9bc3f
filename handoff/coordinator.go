package handoff

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qmuntal/stateless"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Defaults.
const (
	DefaultGenerationTimeout = 5 * time.Minute
	// DefaultReadyTimeout bounds how long a target may take to confirm
	// readiness before the attempt fails.
	DefaultReadyTimeout = 2 * time.Minute
	DefaultLeaseTTL     = 30 * time.Second
	// DefaultPollInterval is how often Watch and Wait read the store when
	// it is not a store.Notifier.
	DefaultPollInterval = time.Second
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
	readyTime  time.Duration
	stopTime   time.Duration
	leaseTTL   time.Duration
	poll       time.Duration
	briefing   Briefing
	facts      FactsFunc
	observers  []func(Event)
	// incarnation is the store's Incarnation when it is store.Exclusive.
	incarnation string
	rejected    atomic.Uint64

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

// WithReadyTimeout bounds how long a transfer's target may take to confirm
// readiness (default DefaultReadyTimeout), counted from the commit that
// enters starting (its launch included); past it the target is stopped and
// the attempt fails.
func WithReadyTimeout(d time.Duration) Option { return func(co *Coordinator) { co.readyTime = d } }

// WithStopTimeout bounds every stop the Coordinator asks of an engine
// (default session.DefaultStopTimeout); a stop not confirmed by then counts
// as engine.Timeout, never as stopped. It is given to the session service
// the Coordinator creates; a service shared with WithSessions keeps its own.
func WithStopTimeout(d time.Duration) Option { return func(co *Coordinator) { co.stopTime = d } }

// WithPollInterval sets how often Watch and Wait read the store when the
// store does not notify (it is not a store.Notifier), and how often a
// Stop sent to a process that does not drive the transfer looks at it
// (default DefaultPollInterval).
func WithPollInterval(d time.Duration) Option { return func(co *Coordinator) { co.poll = d } }

// WithInstanceID names this coordinator process in reservation leases
// (default: a random id). On a shared store (PostgreSQL), give a process
// the same id across its restarts so that its Reconcile takes back its own
// leases at once; a different id waits for them to lapse. On a
// store.Exclusive store (badgerstore) this is unnecessary: a lease written
// before the store was opened belongs to a dead process and is taken at once.
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
		id: ids.New("coord"), genTimeout: DefaultGenerationTimeout, readyTime: DefaultReadyTimeout,
		leaseTTL: DefaultLeaseTTL, poll: DefaultPollInterval, briefing: DefaultBriefing,
		drivers: map[baton.HandoffID]*driver{}, stopping: map[baton.HandoffID]bool{}, took: map[baton.HandoffID]context.CancelFunc{},
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
	c.genTimeout = orDefault(c.genTimeout, DefaultGenerationTimeout)
	c.readyTime = orDefault(c.readyTime, DefaultReadyTimeout)
	c.leaseTTL = orDefault(c.leaseTTL, DefaultLeaseTTL)
	c.poll = orDefault(c.poll, DefaultPollInterval)
	if x, ok := st.(store.Exclusive); ok {
		c.incarnation = x.Incarnation()
	}
	if c.sessions == nil {
		s, err := session.New(st, engines, session.WithClock(c.clock), session.WithLogger(c.log), session.WithStopTimeout(c.stopTime), session.WithInstanceID(c.id))
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

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Stats are counters of what the Coordinator refused.
type Stats struct {
	// RejectedReports counts report submissions whose token was not the
	// current attempt's (unauthenticated: they change nothing).
	RejectedReports uint64
}

// Stats returns the Coordinator's counters.
func (c *Coordinator) Stats() Stats { return Stats{RejectedReports: c.rejected.Load()} }

// Sessions returns the session service the Coordinator launches through.
func (c *Coordinator) Sessions() *session.Service { return c.sessions }

// InstanceID returns the id this Coordinator writes in reservation leases.
func (c *Coordinator) InstanceID() string { return c.id }

// Graph returns the transfer machine as Graphviz DOT and Mermaid.
func (c *Coordinator) Graph() Graph {
	return Graph{DOT: c.sm.ToGraph(), Mermaid: mermaid(), Edges: graphEdges()}
}

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
