package handoff_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// pressureFixture is a coordinator over st and the scripted engine with a
// workspace and no session yet; its policy is set by the test.
type pressureFixture struct {
	t    *testing.T
	st   store.Store
	eng  *enginetest.Engine
	co   *handoff.Coordinator
	svc  *session.Service
	ws   baton.WorkspaceID
	cfg  baton.EngineConfig
	ctx  context.Context
	log  *observer.ObservedLogs
	root string // the workspace's root
}

// newPressureFixture builds the fixture; validate, when given, is the
// engine's configuration check (enginetest.Options.Validate).
func newPressureFixture(t *testing.T, st store.Store, validate ...func(baton.EngineConfig) error) *pressureFixture {
	t.Helper()
	f := &pressureFixture{t: t, st: st, ws: "ws-p", cfg: baton.EngineConfig{Engine: "demo", Model: "demo-1"}, ctx: context.Background()}
	// The root is made first, so removed last: the coordinator's shutdown
	// (a cleanup) waits for a transfer still writing its document there.
	f.root = t.TempDir()
	clk := clock.NewFake(time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC))
	opts := enginetest.Options{Clock: clk}
	if len(validate) > 0 {
		opts.Validate = validate[0]
	}
	f.eng = enginetest.New(opts)
	t.Cleanup(f.eng.Close)
	core, logs := observer.New(zap.InfoLevel)
	f.log = logs
	var err error
	f.co, err = handoff.NewOn(st, engine.Registry{"demo": f.eng}, session.Options{Clock: clk, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.co.Shutdown(context.Background()) })
	f.svc = f.co.Sessions()
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: f.ws, Name: "p", Root: f.root, Config: f.cfg}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *pressureFixture) policy(p store.PressurePolicy) {
	f.t.Helper()
	if _, err := f.co.SetPressure(f.ctx, f.ws, p); err != nil {
		f.t.Fatalf("SetPressure: %v", err)
	}
}

// turn runs one turn that reports tokens of window and ends on its own,
// and waits for its end to be on record; then are the scripts of the
// launches that follow (a pressure transfer's).
func (f *pressureFixture) turn(prompt string, tokens, window int64, then ...enginetest.Script) store.Session {
	f.t.Helper()
	f.eng.Push(append([]enginetest.Script{{EndAfterReady: true, Usage: engine.Usage{Tokens: tokens, Window: window}}}, then...)...)
	s, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: prompt})
	if err != nil {
		f.t.Fatalf("Start: %v", err)
	}
	return f.settled(s.ID)
}

// settled waits until session id's row says ended.
func (f *pressureFixture) settled(id baton.SessionID) store.Session {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ss, err := session.List[store.Session](f.ctx, f.svc, f.ws)
		if err != nil {
			f.t.Fatal(err)
		}
		for _, s := range ss {
			if s.ID == id && s.Status == store.SessionEnded {
				return s
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("session %s never ended", id)
		}
		time.Sleep(time.Millisecond)
	}
}

// handoffs waits until the workspace has n handoffs, and returns them;
// with n == 0 it checks there is still none once the background creation
// has had time to run (quiet).
func (f *pressureFixture) handoffs(n int) []store.Handoff {
	f.t.Helper()
	const quiet = 100 * time.Millisecond
	start := time.Now()
	deadline := start.Add(5 * time.Second)
	for {
		hs, err := f.co.List(f.ctx, f.ws)
		if err != nil {
			f.t.Fatal(err)
		}
		if len(hs) == n && (n > 0 || time.Since(start) > quiet) {
			return hs
		}
		if len(hs) > n || time.Now().After(deadline) {
			f.t.Fatalf("%d handoffs, want %d: %+v", len(hs), n, hs)
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *pressureFixture) wait(id baton.HandoffID, state store.HandoffState) store.Handoff {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	for {
		h, err := f.co.Get(ctx, f.ws, id)
		if err != nil {
			f.t.Fatal(err)
		}
		if h.State == state {
			return h
		}
		if ctx.Err() != nil {
			f.t.Fatalf("handoff %s is %s (%q), want %s", id, h.State, h.Error, state)
		}
		time.Sleep(time.Millisecond)
	}
}

// crashedDue leaves session id as a crash right after a settle's commit
// does: due, its last turn's usage at tokens, and no transfer.
func (f *pressureFixture) crashedDue(id baton.SessionID, tokens int64) {
	f.t.Helper()
	if err := f.st.Update(f.ctx, func(tx store.Tx) error {
		cur, err := tx.GetSession(id)
		if err != nil {
			return err
		}
		cur.Usage.Tokens, cur.Pressure = tokens, store.PressureDue
		return tx.PutSession(cur)
	}); err != nil {
		f.t.Fatal(err)
	}
}

func TestPressureHandsOverAfterTheTurnThatCrossesIt(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	f.policy(store.PressurePolicy{Threshold: 0.8})
	first := f.turn("one", 300, 1000)
	if first.Usage.Tokens != 300 || first.Usage.Window != 1000 || first.Usage.Launch == "" || first.Pressure != store.PressureArmed {
		t.Fatalf("after a turn under the threshold: %+v", first)
	}
	f.handoffs(0)
	second := f.turn("two", 800, 1000, enginetest.Script{EndAfterReady: true}) // the target's first turn
	h := f.handoffs(1)[0]
	want := store.HandoffReason{Trigger: store.TriggerContextPressure, Tokens: 800, Window: 1000, Threshold: 0.8}
	if h.Reason != want || h.SourceSession != second.ID || h.TargetConfig != f.cfg || h.GenerateSummary {
		t.Fatalf("handoff = %+v, want reason %+v from %s to %v without a report", h, want, second.ID, f.cfg)
	}
	if !strings.Contains(h.RequestID, string(second.ID)) || !strings.Contains(h.RequestID, string(second.Usage.Launch)) {
		t.Fatalf("request id %q does not name the session %s and the turn's launch %s", h.RequestID, second.ID, second.Usage.Launch)
	}
	h = f.wait(h.ID, store.StateCompleted)
	cur, err := f.svc.Current(f.ctx, f.ws)
	if err != nil || cur.ID != h.TargetSession {
		t.Fatalf("current = %s (%v), want the target %s", cur.ID, err, h.TargetSession)
	}
	ss, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	for _, s := range ss {
		if s.ID == second.ID && s.Pressure != store.PressureFired {
			t.Fatalf("source pressure mark %q, want fired", s.Pressure)
		}
	}
}

// TestPressureFiresExactlyAtTheThreshold: a turn that fills its window
// exactly to the threshold hands over, even where the threshold times the
// window rounds above the tokens in floating point (0.55 of 200000 is
// 110000.00000000001); found by the property harness.
func TestPressureFiresExactlyAtTheThreshold(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	f.policy(store.PressurePolicy{Threshold: 0.55})
	f.turn("under", 109999, 200000)
	f.handoffs(0)
	s := f.turn("at", 110000, 200000, enginetest.Script{EndAfterReady: true})
	if h := f.handoffs(1)[0]; h.SourceSession != s.ID || h.Reason.Tokens != 110000 {
		t.Fatalf("handoff = %+v, want one from %s for 110000 tokens", h, s.ID)
	}
}

func TestPressureNeverFiresForAStoppedTurnOrUnderTheThreshold(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	f.policy(store.PressurePolicy{Threshold: 0.8})
	f.turn("under", 799, 1000)
	f.turn("no window", 5000, 0)
	f.eng.Push(enginetest.Script{Usage: engine.Usage{Tokens: 950, Window: 1000}}) // runs until stopped
	s, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "long"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.co.Stop(f.ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	if got := f.settled(s.ID); got.Usage.Tokens != 950 || got.Pressure != store.PressureArmed {
		t.Fatalf("a stopped turn: %+v, want its usage kept and the policy armed", got)
	}
	f.handoffs(0)
	if n := f.log.FilterMessageSnippet("cannot fire").Len(); n != 1 {
		t.Fatalf("%d log lines say the policy cannot fire, want 1 (the turn with no window)", n)
	}
}

func TestPressureOncePerSourceSessionUntilRearmed(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	f.policy(store.PressurePolicy{Threshold: 0.5, Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}})
	src := f.turn("fill", 600, 1000, enginetest.Script{StartErr: errors.New("no capacity")}) // the target fails
	h := f.wait(f.handoffs(1)[0].ID, store.StateFailed)
	if _, err := f.co.Stop(f.ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	f.wait(h.ID, store.StateCancelled)
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != src.ID {
		t.Fatalf("current after the cancel = %s, want the source %s", cur.ID, src.ID)
	}
	again := f.turn("more", 700, 1000)
	if again.ID != src.ID || again.Pressure != store.PressureFired {
		t.Fatalf("the source's next turn: %+v, want it resumed and disarmed", again)
	}
	f.handoffs(1)
	f.policy(store.PressurePolicy{Threshold: 0.5}) // re-arms the current session
	f.turn("most", 800, 1000, enginetest.Script{EndAfterReady: true})
	hs := f.handoffs(2)
	if hs[1].Reason.Tokens != 800 || hs[1].TargetConfig != f.cfg {
		t.Fatalf("the second pressure transfer: %+v", hs[1])
	}
}

func TestPressureQueuedInstructionGoesToTheTarget(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	f.policy(store.PressurePolicy{Threshold: 0.8})
	f.eng.Push(enginetest.Script{Usage: engine.Usage{Tokens: 900, Window: 1000}}) // runs until Finish
	src, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "work"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := f.svc.Message(f.ctx, f.ws, "and then this")
	if err != nil || in.State != store.InstructionPending {
		t.Fatalf("Message while the turn runs: %+v, %v", in, err)
	}
	f.eng.Push(enginetest.Script{EndAfterReady: true}, enginetest.Script{EndAfterReady: true}) // the target's turn, then the instruction's
	f.eng.Launches()[0].Proc.Finish(0, nil)
	h := f.wait(f.handoffs(1)[0].ID, store.StateCompleted)
	// The target's turn may end before the completion commits, when the
	// reservation still keeps the queue: the host delivers then, as the
	// workshop does on a settled transfer (session.Service.DeliverPending).
	if _, _, err := f.svc.DeliverPending(f.ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	if got := f.delivered(); got != h.TargetSession {
		t.Fatalf("instruction delivered to %s, want the target %s (source %s)", got, h.TargetSession, src.ID)
	}
}

// delivered waits until the workspace's first instruction is delivered,
// and returns the session it went to.
func (f *pressureFixture) delivered() baton.SessionID {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ins, err := session.List[store.Instruction](f.ctx, f.svc, f.ws)
		if err != nil {
			f.t.Fatal(err)
		}
		if ins[0].State == store.InstructionDelivered {
			return ins[0].Session
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("instruction %+v never delivered", ins[0])
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPressureDueAfterACrashIsCreatedOnceByRecoverAndReconcile(t *testing.T) {
	st := memstore.New()
	f := newPressureFixture(t, st)
	f.policy(store.PressurePolicy{Threshold: 0.8, Report: true})
	s := f.turn("one", 100, 1000)
	f.crashedDue(s.ID, 900)
	if _, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "racing"}); !errors.Is(err, session.ErrWorkspaceBusy) {
		t.Fatalf("a start while a pressure transfer is due: %v, want ErrWorkspaceBusy", err)
	}
	if err := f.co.Shutdown(f.ctx); err != nil {
		t.Fatal(err)
	}
	var cos []*handoff.Coordinator
	for range 2 {
		co, err := handoff.NewOn(st, engine.Registry{"demo": f.eng}, session.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
		cos = append(cos, co)
	}
	f.co = cos[0]
	f.eng.Push(enginetest.Script{Hang: true}) // the report-only turn
	if _, err := cos[0].Recover(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cos[1].Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cos[0].Recover(f.ctx); err != nil {
		t.Fatal(err)
	}
	hs := f.handoffs(1)
	if hs[0].Reason.Tokens != 900 || !hs[0].GenerateSummary || hs[0].SourceSession != s.ID {
		t.Fatalf("recovered pressure transfer: %+v", hs[0])
	}
}

// TestPressureDueSupersededByACallersTransfer: a transfer a caller creates
// from a session whose context-pressure transfer a crash left due takes
// its place (the session is marked fired). Without that, the session
// stayed due once the caller's transfer completed, which no Reconcile
// settles (it creates only the current session's), and every resume of
// it was refused as busy for good.
func TestPressureDueSupersededByACallersTransfer(t *testing.T) {
	st := memstore.New()
	f := newPressureFixture(t, st)
	f.policy(store.PressurePolicy{Threshold: 0.8})
	s := f.turn("one", 100, 1000)
	f.crashedDue(s.ID, 900)
	f.eng.Push(enginetest.Script{EndAfterReady: true}) // the caller's target
	h, err := f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: "by-hand", SourceSession: s.ID, Target: f.cfg})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(h.ID, store.StateCompleted)
	ss, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	for _, x := range ss {
		if x.ID == s.ID && x.Pressure != store.PressureFired {
			t.Fatalf("source mark %q after the caller's transfer, want fired", x.Pressure)
		}
	}
	f.eng.Push(enginetest.Script{EndAfterReady: true, Usage: engine.Usage{Tokens: 100, Window: 1000}})
	if _, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Session: s.ID, Prompt: "back"}); err != nil {
		t.Fatalf("resume of the source: %v", err)
	}
	f.settled(s.ID)
	f.eng.Push(enginetest.Script{EndAfterReady: true})
	if _, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "next"}); err != nil {
		t.Fatalf("a turn after the resumed source's: %v", err)
	}
	if _, err := f.co.Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	if hs := f.handoffs(1); hs[0].ID != h.ID {
		t.Fatalf("handoffs %+v, want only the caller's", hs)
	}
}

func TestSetPressureValidates(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	for _, p := range []store.PressurePolicy{{Threshold: 1.5}, {Threshold: -0.1}, {Threshold: 0.8, Target: baton.EngineConfig{Engine: "nope"}}} {
		if _, err := f.co.SetPressure(f.ctx, f.ws, p); !errors.Is(err, handoff.ErrInvalidRequest) {
			t.Errorf("SetPressure(%+v) = %v, want ErrInvalidRequest", p, err)
		}
	}
	if _, err := f.co.SetPressure(f.ctx, "ws-none", store.PressurePolicy{Threshold: 0.5}); !errors.Is(err, session.ErrNoWorkspace) {
		t.Errorf("SetPressure on no workspace = %v, want ErrNoWorkspace", err)
	}
}

// TestCreateWorkspaceChecksItsPressurePolicy: a policy given at creation
// is checked as SetPressure checks it (it was stored unchecked: a NaN
// threshold, which JSON cannot encode, or a target the engines refuse,
// found only when the policy fired), and a valid one, normalized, hands
// over without SetPressure.
func TestCreateWorkspaceChecksItsPressurePolicy(t *testing.T) {
	f := newPressureFixture(t, memstore.New())
	for i, p := range []store.PressurePolicy{{Threshold: 1.5}, {Threshold: -0.1}, {Threshold: math.NaN()}, {Threshold: 0.8, Target: baton.EngineConfig{Engine: "nope"}}} {
		w := store.Workspace{ID: baton.WorkspaceID(fmt.Sprintf("ws-bad-%d", i)), Name: "bad", Config: f.cfg, Pressure: p}
		if _, err := f.svc.CreateWorkspace(f.ctx, w); !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("CreateWorkspace with policy %+v = %v, want baton.ErrInvalid", p, err)
		}
	}
	f.ws = "ws-created"
	w, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: f.ws, Name: "p", Root: f.root, Config: f.cfg,
		Pressure: store.PressurePolicy{Threshold: 0.8, Target: baton.EngineConfig{Engine: " demo ", Model: "demo-2"}}})
	if err != nil {
		t.Fatal(err)
	}
	target := baton.EngineConfig{Engine: "demo", Model: "demo-2"}
	if w.Pressure.Target != target {
		t.Fatalf("stored target %+v, want it normalized to %+v", w.Pressure.Target, target)
	}
	src := f.turn("fill", 850, 1000, enginetest.Script{EndAfterReady: true})
	h := f.wait(f.handoffs(1)[0].ID, store.StateCompleted)
	if h.SourceSession != src.ID || h.TargetConfig != target || h.Reason.Threshold != 0.8 {
		t.Fatalf("handoff = %+v, want the creation's policy applied to %s", h, src.ID)
	}
}

// TestPressureRefusedDeliversTheQueue: an instruction queued while the
// turn that made a transfer due ran waits for the transfer; when the
// transfer is refused (here its target is no longer offered) and the
// policy disarmed, the instruction is delivered to the session, not left
// pending until some later turn ends.
func TestPressureRefusedDeliversTheQueue(t *testing.T) {
	var refuse atomic.Bool
	f := newPressureFixture(t, memstore.New(), func(cfg baton.EngineConfig) error {
		if refuse.Load() && cfg.Model == "demo-2" {
			return baton.Errorf(engine.ErrUnsupportedConfig, "demo-2 is gone")
		}
		return nil
	})
	f.policy(store.PressurePolicy{Threshold: 0.8, Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}})
	refuse.Store(true)
	f.eng.Push(enginetest.Script{Usage: engine.Usage{Tokens: 900, Window: 1000}}) // runs until Finish
	src, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Message(f.ctx, f.ws, "and then this"); err != nil {
		t.Fatal(err)
	}
	f.eng.Push(enginetest.Script{EndAfterReady: true}) // the instruction's turn
	f.eng.Launches()[0].Proc.Finish(0, nil)
	if got := f.delivered(); got != src.ID {
		t.Fatalf("instruction delivered to %s, want the source %s", got, src.ID)
	}
	f.handoffs(0)
	if n := f.log.FilterMessageSnippet("policy is disarmed").Len(); n != 1 {
		t.Fatalf("%d log lines say the policy is disarmed, want 1", n)
	}
}
