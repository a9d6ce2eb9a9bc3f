package handofftest

import (
	"context"
	"fmt"
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
	// Options are passed to every handoff.New the harness calls, after the
	// harness's own clock and generation-timeout options.
	Options []handoff.Option
	// Wait bounds how long the harness waits for a transfer to come to
	// rest after a step (default 5 s; the scripted engine answers at once,
	// so this only matters on a loaded machine).
	Wait time.Duration
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
		t.Repeat(h.actions())
	}
}

const genTimeout = time.Minute

var (
	engineA = baton.EngineConfig{Engine: "demo", Model: "demo-1"}
	engineB = baton.EngineConfig{Engine: "demo", Model: "demo-2"}
	engineC = baton.EngineConfig{Engine: "alt", Model: "alt-1", ReasoningEffort: "high"}
	configs = []baton.EngineConfig{engineA, engineB, engineC}
)

type harness struct {
	t       *rapid.T
	cfg     Config
	ctx     context.Context
	st      store.Store
	release func()
	clk     *clock.Fake
	eng     *enginetest.Engine
	reg     *engine.Registry
	co      *handoff.Coordinator

	mu   sync.Mutex // guards plans (read by the engine's ScriptFor)
	plan map[baton.WorkspaceID]attemptPlan

	wss     []baton.WorkspaceID
	hs      map[baton.HandoffID]*model
	order   []baton.HandoffID
	wakeups map[baton.WakeupID]store.Wakeup
	// movedOn marks workspaces where an ordinary start happened since their
	// latest handoff settled: invariants 4 and 5 speak of the moment a
	// transfer settles, not of every later start.
	movedOn map[baton.WorkspaceID]bool
	seq     int
}

func newHarness(t *rapid.T, cfg Config) *harness {
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Second
	}
	h := &harness{
		t: t, cfg: cfg, ctx: context.Background(),
		clk:  clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		plan: map[baton.WorkspaceID]attemptPlan{}, hs: map[baton.HandoffID]*model{},
		wakeups: map[baton.WakeupID]store.Wakeup{}, movedOn: map[baton.WorkspaceID]bool{},
		wss: []baton.WorkspaceID{"ws-0", "ws-1"},
	}
	if cfg.NewStore == nil {
		h.st, h.release = memstore.New(), func() {}
	} else {
		st, release, err := cfg.NewStore()
		if err != nil {
			t.Fatalf("NewStore: %v", err)
		}
		h.st, h.release = st, release
	}
	h.eng = enginetest.New(enginetest.Options{Clock: h.clk, ScriptFor: h.scriptFor, Submit: h.submit})
	h.reg = engine.NewRegistry(map[string]engine.Engine{"demo": h.eng, "alt": h.eng})
	h.co = h.newCoordinator()
	svc := h.co.Sessions()
	for i, ws := range h.wss {
		if _, err := svc.CreateWorkspace(h.ctx, store.Workspace{ID: ws, Name: string(ws), Mission: "mission of " + string(ws), Config: engineA}); err != nil {
			t.Fatalf("create workspace: %v", err)
		}
		if i == 0 { // ws-0 has a running source; ws-1 has no session at all.
			if _, err := svc.Start(h.ctx, session.TurnRequest{Workspace: ws, Prompt: "start"}); err != nil {
				t.Fatalf("start source: %v", err)
			}
		}
	}
	return h
}

func (h *harness) newCoordinator() *handoff.Coordinator {
	// One instance id across restarts (the same node coming back), and a
	// lease that never needs renewing within a sequence, so that renewals
	// do not write while a step compares snapshots.
	opts := append([]handoff.Option{handoff.WithClock(h.clk), handoff.WithGenerationTimeout(genTimeout),
		handoff.WithInstanceID("node-1"), handoff.WithLeaseTTL(1000 * time.Hour)}, h.cfg.Options...)
	co, err := handoff.New(h.st, h.reg, opts...)
	if err != nil {
		h.t.Fatalf("handoff.New: %v", err)
	}
	return co
}

func (h *harness) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.eng.CrashAll() // end processes whose stop was scripted unconfirmed
	_ = h.co.Shutdown(ctx)
	h.eng.Close()
	h.release()
}

// submit is the engine's report hook: the coordinator's SubmitReport. The
// Coordinator may be replaced by a restart, so it is looked up each time.
func (h *harness) submit(ctx context.Context, cred engine.ReportCredentials, text string) error {
	h.mu.Lock()
	co := h.co
	h.mu.Unlock()
	return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
}

func (h *harness) setCoordinator(co *handoff.Coordinator) {
	h.mu.Lock()
	h.co = co
	h.mu.Unlock()
}

func (h *harness) fatalf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf(format, args...)
}

func (h *harness) nextSeq() int {
	h.seq++
	return h.seq
}

func (h *harness) label(format string, args ...any) { h.t.Logf(format, args...) }

func reportText(ws baton.WorkspaceID, n int) string {
	return fmt.Sprintf("# Report %s-%d\nverified: go test", ws, n)
}
