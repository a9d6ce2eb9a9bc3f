package handofftest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// Config says what the harness runs against.
type Config struct {
	// NewStore opens a fresh, empty store for one sequence and returns a
	// function that releases it. Default: memstore.
	NewStore func() (store.Store, func(), error)
	// Nodes is how many coordinator processes share the store, the clock
	// and the engine (default 2; 1 runs the single-process world).
	Nodes int
	// Options are passed to every handoff.New the harness calls, after the
	// harness's own WithTimeouts (giving it again is an error at New: the
	// model counts with the harness's own).
	Options []handoff.Option
	// Wait bounds how long the harness waits for a transfer to come to
	// rest after a step (default 5 s; the scripted engine answers at once,
	// so this only matters on a loaded machine).
	Wait time.Duration
	// WrapStore, when set, wraps the shared store every node writes
	// through (the harness itself reads the store unwrapped). A test uses
	// it to plant a store-level bug and prove the harness catches it. The
	// store's optional capabilities are passed through around it.
	WrapStore func(store.Store) store.Store
	// WrapEngine, when set, wraps the shared engine every node launches
	// through, below the node and above the harness's own launch checks:
	// the checks see what the wrapper passes on.
	WrapEngine func(engine.Engine) engine.Engine

	// Unsteered sends every request to any node that runs, and lets agent
	// processes outlive their node: a crash or a shutdown whose stops are
	// not confirmed leaves them running, a restarted node ends nothing of
	// its previous life itself, and Reconcile may go to a node that still
	// runs a process of its transfers. baton must then stop what another
	// node launched through the engine.Reaper, and learn what a dead life
	// left running from its launch records. Off by default: the harness
	// then routes a Create to the node running the agent, a crash or
	// shutdown takes the node's processes with it, and Reconcile goes only
	// to nodes that run nothing of their transfers (see the package's
	// Caveats).
	Unsteered bool

	// triage, set only by a test inside this package, ends a sequence
	// quietly on a failure it matches: a way to look past a bug already
	// reported while hunting the next. Nil in every committed test.
	triage func(msg string) bool
}

// Run checks the Coordinator's invariants over random sequences (see the
// package documentation). It fails t with the shrunk sequence when one
// breaks.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	rapid.Check(t, Check(cfg))
}

// Check returns the property Run checks, for callers that run rapid
// themselves.
func Check(cfg Config) func(*rapid.T) {
	return func(t *rapid.T) {
		h := newHarness(t, cfg)
		defer h.close()
		acts := h.actions()
		for name, fn := range acts {
			if name == "" {
				continue
			}
			acts[name] = func(t *rapid.T) {
				if h.ended {
					return // the sequence ended on a failure under triage
				}
				h.log.add(fmt.Sprintf("== step: %s (clock %s)", name, h.clk.Now().Format("15:04:05")))
				h.beforeStep(name)
				fn(t)
			}
		}
		t.Repeat(acts)
	}
}

const (
	genTimeout   = time.Minute
	readyTimeout = 90 * time.Second
	leaseTTL     = 30 * time.Second
	// stopTimeout bounds every stop and reap (a duration no other timer
	// of a node has: see lifeClock).
	stopTimeout = 7 * time.Second
)

var (
	engineA = baton.EngineConfig{Engine: "demo", Model: "demo-1"}
	engineB = baton.EngineConfig{Engine: "demo", Model: "demo-2"}
	engineC = baton.EngineConfig{Engine: "alt", Model: "alt-1", ReasoningEffort: "high"}
	configs = []baton.EngineConfig{engineA, engineB, engineC}
	start   = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

type harness struct {
	t       *rapid.T
	cfg     Config
	ctx     context.Context
	raw     store.Store // the store as opened: what the harness reads
	shared  store.Store // raw, wrapped by Config.WrapStore: what nodes write
	release func()
	clk     *clock.Fake
	// clkMu is held while the clock moves and while a node arms a timer
	// (see lifeClock).
	clkMu sync.Mutex
	eng   *enginetest.Engine
	nodes []*node
	tmp   string

	mu         sync.Mutex // guards plan, violations, launchNode (touched by engine goroutines)
	plan       map[baton.WorkspaceID]attemptPlan
	violations []string
	deferred   []func()           // launch checks that need the model: run by check
	launchNode map[int]launchInfo // by enginetest launch number (see launchOf)
	launchID   map[baton.LaunchID]launchInfo
	// recorded are the launch records each node life inserted, spawned or
	// not (see launchTx).
	recorded   map[baton.LaunchID]launchInfo
	reapAnswer reapScript // how the engine's reaper answers during an actReap step
	reapNext   bool       // the next drawReap draws a reap that confirms nothing
	// parked is a node goroutine held at a hook for the test goroutine to
	// interpose (see interpose.go); closing lets every hook go on.
	parked  *parkedHook
	closing bool
	// afterRestHooks run once the next await has found rest and checked
	// it (on the test goroutine).
	afterRestHooks []func()
	// slowStops are the launches whose stop is answered only once the
	// stop's context ends (see actSlowStop).
	slowStops map[baton.LaunchID]bool
	// owners are the owner tokens launches carried, by workspace and the
	// epoch of the reservation they matched: the credentials invariant 8
	// presents, right and wrong.
	owners map[baton.WorkspaceID]map[int64]baton.Token

	wss     []baton.WorkspaceID
	roots   map[baton.WorkspaceID]string
	home    map[baton.WorkspaceID]int // the node that runs a workspace's ordinary sessions
	hs      map[baton.HandoffID]*model
	order   []baton.HandoffID
	wakeups map[baton.WakeupID]store.Wakeup
	epoch   map[baton.WorkspaceID]int64 // reservation takes, as the model counts them
	// instrs are the instructions the harness sent, oldest first, with the
	// state the model gives each; instrUncertain marks a workspace whose
	// queue the model cannot tell (see instructions.go).
	instrs         []*instr
	instrUncertain map[baton.WorkspaceID]bool
	// goneAt is when each node that is not up stopped running (froze,
	// crashed or shut down): no lease it holds may run past that plus the
	// lease TTL, since nobody but it may renew it.
	goneAt map[string]time.Time
	// pressure is each workspace's context-pressure policy as the model
	// has it (pressurePct its threshold in percent); marks and arming are
	// where it stands for each session, and how often SetPressure re-armed
	// it; settles are the settles that fired it, by request id (see
	// pressure.go).
	pressure    map[baton.WorkspaceID]store.PressurePolicy
	pressurePct map[baton.WorkspaceID]int
	marks       map[baton.SessionID]store.PressureMark
	arming      map[baton.SessionID]int
	settles     map[string]*pressureSettle
	// usageNext is the usage the next ordinary turn of a workspace
	// reports; usageTaken marks it taken by a launch (drawn again before
	// the next step); crashOnDue crashes a node right after a commit of
	// its that marks a session due. Guarded by mu.
	usageNext  map[baton.WorkspaceID]engine.Usage
	usageTaken map[baton.WorkspaceID]bool
	crashOnDue map[int]bool
	// archived workspaces take no new work.
	archived map[baton.WorkspaceID]bool
	// movedOn marks workspaces where an ordinary start happened since their
	// latest handoff settled: invariants 4 and 5 speak of the moment a
	// transfer settles, not of every later start.
	movedOn map[baton.WorkspaceID]bool
	seq     int
	ended   bool // a triaged failure ended the sequence
	// log keeps what the nodes logged and the steps taken, for a failure's
	// message.
	log trace
}

// launchInfo is what the harness knows of a launch beyond the engine's
// record: which node made it, in which of its lives.
type launchInfo struct {
	node, life int
}

func newHarness(t *rapid.T, cfg Config) *harness {
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Second
	}
	if cfg.Nodes <= 0 {
		cfg.Nodes = 2
	}
	h := &harness{
		t: t, cfg: cfg, ctx: context.Background(),
		clk:  clock.NewFake(start),
		plan: map[baton.WorkspaceID]attemptPlan{}, hs: map[baton.HandoffID]*model{},
		launchNode: map[int]launchInfo{},
		launchID:   map[baton.LaunchID]launchInfo{},
		recorded:   map[baton.LaunchID]launchInfo{},
		slowStops:  map[baton.LaunchID]bool{},
		owners:     map[baton.WorkspaceID]map[int64]baton.Token{},
		wakeups:    map[baton.WakeupID]store.Wakeup{}, movedOn: map[baton.WorkspaceID]bool{},
		wss:   []baton.WorkspaceID{"ws-0", "ws-1", "ws-2"},
		roots: map[baton.WorkspaceID]string{}, home: map[baton.WorkspaceID]int{},
		epoch: map[baton.WorkspaceID]int64{}, archived: map[baton.WorkspaceID]bool{},
		instrUncertain: map[baton.WorkspaceID]bool{}, goneAt: map[string]time.Time{},
		pressure: map[baton.WorkspaceID]store.PressurePolicy{}, pressurePct: map[baton.WorkspaceID]int{},
		marks: map[baton.SessionID]store.PressureMark{}, arming: map[baton.SessionID]int{}, settles: map[string]*pressureSettle{},
		usageNext: map[baton.WorkspaceID]engine.Usage{}, crashOnDue: map[int]bool{},
		usageTaken: map[baton.WorkspaceID]bool{"ws-0": true, "ws-1": true, "ws-2": true},
	}
	if cfg.NewStore == nil {
		h.raw, h.release = memstore.New(), func() {}
	} else {
		st, release, err := cfg.NewStore()
		if err != nil {
			t.Fatalf("NewStore: %v", err)
		}
		h.raw, h.release = st, release
	}
	h.shared = h.raw
	if cfg.WrapStore != nil {
		h.shared = withCaps(cfg.WrapStore(h.raw), h.raw)
	}
	tmp, err := os.MkdirTemp("", "handofftest-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	h.tmp = tmp
	h.eng = enginetest.New(enginetest.Options{Clock: h.clk, ScriptFor: h.scriptFor, Submit: h.submit})
	for i := range cfg.Nodes {
		n := &node{idx: i, id: "node-" + strconv.Itoa(i), gate: newGate()}
		h.nodes = append(h.nodes, n)
		n.co = h.newCoordinator(n)
	}
	for i, ws := range h.wss {
		h.home[ws] = i % cfg.Nodes
		w := store.Workspace{ID: ws, Name: string(ws), Mission: "mission of " + string(ws), Config: engineA}
		if i == 0 { // ws-0 publishes handoff documents under a root
			w.Root = tmp
			h.roots[ws] = tmp
		}
		if _, err := h.nodes[0].co.Sessions().CreateWorkspace(h.ctx, w); err != nil {
			t.Fatalf("create workspace: %v", err)
		}
	}
	// Some workspaces start with a context-pressure policy.
	for _, ws := range h.wss {
		if rapid.IntRange(0, 2).Draw(t, "startWithPressure") == 0 {
			h.setPressure(t, ws, h.nodes[0], []int{50, 55, 80, 100})
		}
	}
	h.drawUsages(t)
	// ws-0 has a running source; ws-1 has only rows written before
	// activation orders existed (or none); ws-2 starts empty.
	if _, err := h.homeNode("ws-0").co.Sessions().Start(h.ctx, session.TurnRequest{Workspace: "ws-0", Prompt: "start"}); err != nil {
		t.Fatalf("start source: %v", err)
	}
	h.legacyRows(t, "ws-1")
	return h
}

// newCoordinator starts a new life of node n: a Coordinator with the
// node's instance id, its gated store and its gated engine.
func (h *harness) newCoordinator(n *node) *handoff.Coordinator {
	eng := engine.Engine(checkedEngine{h: h})
	if h.cfg.WrapEngine != nil {
		eng = h.cfg.WrapEngine(eng)
	}
	ge := gatedEngine{inner: eng, node: n.idx, g: n.gate, slow: func(id baton.LaunchID) bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.slowStops[id]
	}}
	reg := engine.Registry{"demo": ge, "alt": ge}
	lc := &lifeClock{clk: h.clk, mu: &h.clkMu}
	opts := append([]handoff.Option{handoff.WithTimeouts(handoff.Timeouts{Generation: genTimeout, Ready: readyTimeout, Lease: leaseTTL})}, h.cfg.Options...)
	li := launchInfo{node: n.idx, life: n.life}
	g := n.gate
	hooks := &storeHooks{
		due: func() {
			h.mu.Lock()
			crash := h.crashOnDue[li.node]
			delete(h.crashOnDue, li.node)
			h.mu.Unlock()
			if crash {
				g.set(nodeCrashed) // right after the settle's commit
			}
		},
		record: func(id baton.LaunchID) {
			h.mu.Lock()
			h.recorded[id] = li
			h.mu.Unlock()
		},
		targets: func(ls []store.Launch) {
			for _, l := range ls {
				h.onTargetRecorded(li.node, li.life, l)
			}
		},
	}
	svc, err := session.New(withCaps(gatedStore{Store: h.shared, g: n.gate, hooks: hooks}, h.shared), reg,
		session.Options{Clock: lc, InstanceID: n.id, Logger: h.log.logger(n.id, n.life), StopTimeout: stopTimeout, ReadyTimeout: readyTimeout})
	if err != nil {
		h.t.Fatalf("session.New: %v", err)
	}
	co, err := handoff.New(svc, reg, opts...)
	if err != nil {
		h.t.Fatalf("handoff.New: %v", err)
	}
	n.clk = lc
	// The Coordinator arms its first lease renewal on a goroutine of its
	// own: wait for it (a bounded poll), or a clock move could come first.
	for deadline := time.Now().Add(h.cfg.Wait); !lc.renewalArmed(); {
		if time.Now().After(deadline) {
			h.fatalf("%s (life %d) armed no lease renewal within %v", n.id, n.life, h.cfg.Wait)
		}
		time.Sleep(100 * time.Microsecond)
	}
	return co
}

func (h *harness) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.releaseParked()
	for _, n := range h.nodes {
		if n.gate.get() == nodeFrozen {
			n.gate.set(nodeUp)
		}
	}
	h.eng.CrashAll() // end processes whose stop was scripted unconfirmed
	for _, n := range h.nodes {
		for _, co := range append(n.dead, n.co) {
			_ = co.Shutdown(ctx)
		}
	}
	h.eng.Close()
	h.release()
	_ = os.RemoveAll(h.tmp)
}

// submit is the engine's report hook: SubmitReport on the node the plan
// names (any node may receive it), or the first node that runs.
func (h *harness) submit(ctx context.Context, cred engine.ReportCredentials, text string) error {
	h.mu.Lock()
	want := h.plan[cred.Workspace].reportNode
	h.mu.Unlock()
	co := h.coordinatorFor(want)
	if co == nil {
		return errNodeCrashed
	}
	return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
}

// coordinatorFor returns node i's Coordinator if it is up, else the first
// node's that is; nil when none is.
func (h *harness) coordinatorFor(i int) *handoff.Coordinator {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= 0 && i < len(h.nodes) && h.nodes[i].gate.get() == nodeUp {
		return h.nodes[i].co
	}
	for _, n := range h.nodes {
		if n.gate.get() == nodeUp {
			return n.co
		}
	}
	return nil
}

func (h *harness) homeNode(ws baton.WorkspaceID) *node { return h.nodes[h.home[ws]] }

// advanceClock moves the shared clock by d, under the clock lock.
func (h *harness) advanceClock(d time.Duration) {
	h.clkMu.Lock()
	defer h.clkMu.Unlock()
	h.clk.Advance(d)
}

func (h *harness) fatalf(format string, args ...any) {
	h.t.Helper()
	if msg := fmt.Sprintf(format, args...); h.cfg.triage != nil && h.cfg.triage(msg) {
		h.ended = true
		h.t.Skip("triaged: " + msg)
	}
	h.t.Fatalf(format+"\n\nwhat the nodes logged last:\n%s", append(args, h.log.String())...)
}

// violate records a violation seen off the test goroutine (an engine
// start); the next check reports it.
func (h *harness) violate(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.violations = append(h.violations, fmt.Sprintf(format, args...))
}

func (h *harness) nextSeq() int {
	h.seq++
	return h.seq
}

func reportText(ws baton.WorkspaceID, n int) string {
	return fmt.Sprintf("# Report %s-%d\nverified: go test", ws, n)
}

// setGate moves node n's current life to st, noting when it stopped
// running.
func (h *harness) setGate(n *node, st nodeState) {
	n.gate.set(st)
	if st == nodeUp {
		delete(h.goneAt, n.id)
	} else if _, ok := h.goneAt[n.id]; !ok {
		h.goneAt[n.id] = h.clk.Now()
	}
}
