package handofftest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// errNodeCrashed is what a crashed node's store and engine calls return:
// its process is gone, so nothing it still tries reaches the world.
var errNodeCrashed = baton.NewError(baton.ErrUnavailable, "handofftest: node crashed")

// nodeState is the life of one simulated coordinator process.
type nodeState int

const (
	nodeUp      nodeState = iota
	nodeFrozen            // paused: every store and engine call it makes waits
	nodeCrashed           // dead without Shutdown: every call fails
	nodeDown              // shut down gracefully, not restarted yet
)

func (s nodeState) String() string {
	return [...]string{"up", "frozen", "crashed", "down"}[s]
}

// gate is a node's door to the world. A frozen node's calls wait at it
// until the node thaws (or crashes); a crashed node's calls fail there.
type gate struct {
	mu    sync.Mutex
	state nodeState
	thaw  chan struct{} // closed when a freeze ends
}

func newGate() *gate { return &gate{thaw: make(chan struct{})} }

func (g *gate) pass(ctx context.Context) error {
	for {
		g.mu.Lock()
		st, thaw := g.state, g.thaw
		g.mu.Unlock()
		switch st {
		case nodeCrashed:
			return errNodeCrashed
		case nodeFrozen:
			select {
			case <-thaw:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

func (g *gate) set(st nodeState) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == nodeFrozen && st != nodeFrozen {
		close(g.thaw)
		g.thaw = make(chan struct{})
	}
	g.state = st
}

func (g *gate) get() nodeState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state
}

// node is one simulated coordinator process: its own Coordinator (and so
// its own session service and table of processes), a distinct instance id,
// and gated access to the shared store and the shared engine.
type node struct {
	idx  int
	id   string
	gate *gate
	// life counts the node's starts: a launch made in an earlier life
	// belongs to a process that crashed or shut down.
	life int
	co   *handoff.Coordinator
	// dead are the Coordinators of this node's earlier lives, shut down when
	// the sequence ends so that no goroutine outlives it.
	dead []*handoff.Coordinator
	// clk is the current life's view of the shared clock.
	clk *lifeClock
}

// lifeClock is one node life's view of the harness's fake clock. It notes
// when the lease-renewal timer the life armed last is due, so that the
// harness can wait for the node to arm its next renewal before it moves the
// clock on: the Coordinator arms that timer on a goroutine of its own, after
// the previous renewal, and a clock move that comes first leaves the node's
// renewals a step behind the clock (two such moves, and its lease lapses
// although the node runs). Counting the clock's pending timers cannot tell:
// a crashed life's renewal loop keeps arming timers of its own.
//
// A renewal timer is one of exactly a third of the lease TTL (the period
// handoff renews at); NewTimer runs under the harness's clock lock, which
// the harness holds while it advances the clock, so the deadline noted is
// the timer's own.
type lifeClock struct {
	clk *clock.Fake
	mu  *sync.Mutex // the harness's clock lock
	// stops counts the stop timeouts the life armed (timers of exactly
	// stopTimeout: every stop and reap it asks of the engine); guarded by
	// mu.
	stops int
	// renewalDue is when the renewal timer armed last fires; guarded by mu.
	renewalDue time.Time
	// armedAt are the timers the life armed for a point in time
	// (NewTimerAt: its readiness and generation timeouts) that may still
	// be pending; guarded by mu.
	armedAt []*atTimer
}

// atTimer is a timer a life armed with NewTimerAt.
type atTimer struct {
	clock.Timer
	c       *lifeClock
	at      time.Time
	stopped bool // guarded by c.mu
}

func (t *atTimer) Stop() bool {
	t.c.mu.Lock()
	t.stopped = true
	t.c.mu.Unlock()
	return t.Timer.Stop()
}

func (c *lifeClock) Now() time.Time { return c.clk.Now() }

func (c *lifeClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.clk.NewTimer(d)
	switch d {
	case leaseTTL / 3:
		c.renewalDue = c.clk.Now().Add(d)
	case stopTimeout:
		c.stops++
	}
	return t
}

// stopsArmed counts the stop timeouts the life has armed.
func (c *lifeClock) stopsArmed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stops
}

// NewTimerAt arms a timer for at exactly (see clock.NewTimerAt): a deadline
// the Coordinator computes from a stored time must not move with a clock
// step the harness takes meanwhile.
func (c *lifeClock) NewTimerAt(at time.Time) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &atTimer{Timer: c.clk.NewTimerAt(at), c: c, at: at}
	c.armedAt = append(c.armedAt, t)
	return t
}

// armedFor reports whether the life has a timer pending for exactly at.
// The harness waits for it before it moves the clock past at, and a
// timeout armed for another time (counted from anything but the commit
// the model counts from) is never found: the step fails, naming it.
func (c *lifeClock) armedFor(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clk.Now()
	keep := c.armedAt[:0]
	found := false
	for _, t := range c.armedAt {
		if t.stopped || !t.at.After(now) {
			continue // stopped, or fired
		}
		keep = append(keep, t)
		found = found || t.at.Equal(at)
	}
	clear(c.armedAt[len(keep):])
	c.armedAt = keep
	return found
}

// renewalArmed reports whether the life's next lease renewal is armed: its
// timer is due after now.
func (c *lifeClock) renewalArmed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renewalDue.After(c.clk.Now())
}

// gatedStore is a node's view of the shared store. It tells the harness
// of the launches the life records (see launchTx).
type gatedStore struct {
	store.Store
	g     *gate
	hooks *storeHooks
}

// storeHooks are what a life's store tells the harness: each launch record
// it inserts (before the commit), the targets' launch records a commit
// made (after it: the commit into starting), and a commit that marked a
// session due for a context-pressure transfer (after it).
type storeHooks struct {
	record  func(baton.LaunchID)
	targets func([]store.Launch)
	due     func()
}

func (s gatedStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.g.pass(ctx); err != nil {
		return err
	}
	if s.hooks == nil {
		return s.Store.Update(ctx, fn)
	}
	var notes *txNotes
	err := s.Store.Update(ctx, func(tx store.Tx) error {
		notes = &txNotes{hooks: s.hooks, sessions: map[baton.SessionID]bool{}} // per try: a store may run fn again
		return fn(launchTx{Tx: tx, notes: notes})
	})
	if err == nil && notes != nil && len(notes.targets) > 0 {
		s.hooks.targets(notes.targets)
	}
	if err == nil && notes != nil && notes.due {
		s.hooks.due()
	}
	return err
}

// launchTx notes each launch record a life inserts, and which of them are
// a target's (a launch of a session the same transaction inserted): a
// launch recorded and never spawned is known to the harness only so.
type launchTx struct {
	store.Tx
	notes *txNotes
}

type txNotes struct {
	hooks    *storeHooks
	sessions map[baton.SessionID]bool
	targets  []store.Launch
	due      bool // a session marked due (store.PressureDue)
}

// PutSession notes the sessions the transaction creates, and those it
// marks due.
func (t launchTx) PutSession(s store.Session) error {
	prev, err := t.Tx.GetSession(s.ID)
	t.notes.due = t.notes.due || (s.Pressure == store.PressureDue && prev.Pressure != store.PressureDue)
	created := errors.Is(err, store.ErrNotFound)
	if err != nil && !created {
		return err
	}
	if err := t.Tx.PutSession(s); err != nil {
		return err
	}
	if created {
		t.notes.sessions[s.ID] = true
	}
	return nil
}

// PutLaunch notes the launch records the transaction creates (a launch
// about to be made), and those of target sessions it created.
func (t launchTx) PutLaunch(l store.Launch) error {
	_, err := t.Tx.GetLaunch(l.ID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		t.notes.hooks.record(l.ID)
		if l.Handoff != "" && t.notes.sessions[l.Session] {
			t.notes.targets = append(t.notes.targets, l)
		}
	case err != nil:
		return err
	}
	return t.Tx.PutLaunch(l)
}

func (s gatedStore) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.g.pass(ctx); err != nil {
		return err
	}
	return s.Store.View(ctx, fn)
}

// gatedEngine is a node's view of the shared engine. It tags each start
// with the node, so the launch checks know who launched.
type gatedEngine struct {
	inner engine.Engine
	node  int
	g     *gate
	// slow reports whether a stop of the launch is answered only once the
	// stop's context ends (see actSlowStop).
	slow func(baton.LaunchID) bool
}

type nodeKey struct{}

func nodeOf(ctx context.Context) int {
	n, ok := ctx.Value(nodeKey{}).(int)
	if !ok {
		return -1
	}
	return n
}

func (e gatedEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	if err := e.g.pass(ctx); err != nil {
		return nil, err
	}
	p, err := e.inner.Start(context.WithValue(ctx, nodeKey{}, e.node), req)
	if err != nil {
		return nil, err
	}
	return gatedProcess{Process: p, g: e.g, id: req.LaunchID, slow: e.slow}, nil
}

// Validate passes the shared engine's validation through.
func (e gatedEngine) Validate(cfg baton.EngineConfig) error {
	if v, ok := e.inner.(engine.Validator); ok {
		return v.Validate(cfg)
	}
	return nil
}

// ReapLaunch passes the shared engine's reaping through: any node may reap
// a launch of any other (the processes are the machine's, not the node's).
func (e gatedEngine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	if err := e.g.pass(ctx); err != nil {
		return engine.Failed, err
	}
	if r, ok := e.inner.(engine.Reaper); ok {
		return r.ReapLaunch(ctx, id)
	}
	return engine.Failed, errors.New("handofftest: engine cannot reap")
}

// gatedProcess delivers a process's callbacks to its node only when the
// node runs: a frozen node learns of readiness when it thaws (a late
// callback), a crashed node never does.
type gatedProcess struct {
	engine.Process
	g    *gate
	id   baton.LaunchID
	slow func(baton.LaunchID) bool
}

func (p gatedProcess) Ready(ctx context.Context) (string, error) {
	id, err := p.Process.Ready(ctx)
	if gerr := p.g.pass(ctx); gerr != nil {
		return "", gerr
	}
	return id, err
}

func (p gatedProcess) Stop(ctx context.Context) (engine.StopOutcome, error) {
	if err := p.g.pass(ctx); err != nil {
		return engine.Failed, err
	}
	if p.slow != nil && p.slow(p.id) {
		// A slow stop: no answer before the caller gives up (the
		// process runs on).
		<-ctx.Done()
		return engine.Timeout, ctx.Err()
	}
	return p.Process.Stop(ctx)
}
