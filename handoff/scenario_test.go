package handoff_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

type fixture struct {
	t     *testing.T
	st    store.Store
	eng   *enginetest.Engine
	co    *handoff.Coordinator
	svc   *session.Service
	clk   *clock.Fake
	ws    baton.WorkspaceID
	root  string
	src   store.Session
	ctx   context.Context
	cfgA  baton.EngineConfig
	cfgB  baton.EngineConfig
	coord **handoff.Coordinator
}

// newFixture builds a coordinator over memstore and the scripted engine,
// with a workspace whose source session runs (launch 1).
func newFixture(t *testing.T, opts ...handoff.Option) *fixture {
	t.Helper()
	return newFixtureOnAs(t, memstore.New(), "", opts...)
}

// newFixtureAs is newFixture with the session service's instance id.
func newFixtureAs(t *testing.T, id string, opts ...handoff.Option) *fixture {
	t.Helper()
	return newFixtureOnAs(t, memstore.New(), id, opts...)
}

// newFixtureOn is newFixture over st.
func newFixtureOn(t *testing.T, st store.Store, opts ...handoff.Option) *fixture {
	t.Helper()
	return newFixtureOnAs(t, st, "", opts...)
}

// newFixtureOnAs is newFixtureAs over st.
func newFixtureOnAs(t *testing.T, st store.Store, id string, opts ...handoff.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, st: st, ctx: context.Background(), ws: "ws-1", root: t.TempDir(),
		clk:  clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		cfgA: baton.EngineConfig{Engine: "demo", Model: "demo-1"}, cfgB: baton.EngineConfig{Engine: "demo", Model: "demo-2"}}
	var co *handoff.Coordinator
	f.eng = enginetest.New(enginetest.Options{Clock: f.clk, Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
		return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
	}})
	t.Cleanup(f.eng.Close)
	var err error
	co, err = handoff.NewOn(f.st, engine.Registry{"demo": f.eng}, session.Options{Clock: f.clk, InstanceID: id}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	f.co, f.svc = co, co.Sessions()
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: f.ws, Name: "demo", Mission: "ship it", Root: f.root, Config: f.cfgA}); err != nil {
		t.Fatal(err)
	}
	f.src, err = f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) create(id string, summary bool) store.Handoff {
	f.t.Helper()
	h, err := f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: id, SourceSession: f.src.ID, GenerateSummary: summary, Target: f.cfgB})
	if err != nil {
		f.t.Fatalf("Create: %v", err)
	}
	return h
}

// wait polls until the handoff reaches state (bounded: the scripted engine
// resolves at once).
func (f *fixture) wait(id baton.HandoffID, state store.HandoffState) store.Handoff {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h, err := f.co.Get(f.ctx, f.ws, id)
		if err != nil {
			f.t.Fatal(err)
		}
		if h.State == state {
			return h
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("handoff %s: state %s (error %q), want %s", id, h.State, h.Error, state)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitTimerBy waits until a timer is armed within d of now (the lease
// renewal timer is due much later).
func (f *fixture) waitTimerBy(d time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.clk.PendingBy(f.clk.Now().Add(d)) == 0 {
		if time.Now().After(deadline) {
			f.t.Fatalf("no timer armed within %v", d)
		}
		time.Sleep(time.Millisecond)
	}
}

// launches waits until the engine has seen n starts.
func (f *fixture) launches(n int) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	if _, err := f.eng.WaitLaunches(ctx, n); err != nil {
		f.t.Fatalf("waiting for %d launches: %v", n, err)
	}
}

func (f *fixture) current() store.Session {
	f.t.Helper()
	s, err := f.svc.Current(f.ctx, f.ws)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func TestTransferWithoutSummaryCompletes(t *testing.T) {
	f := newFixture(t)
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Session: f.src.ID, Prompt: "check CI", At: f.clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	h := f.create("r1", false)
	h = f.wait(h.ID, store.StateCompleted)
	cur := f.current()
	if cur.ID != h.TargetSession || cur.Config != f.cfgB || cur.NativeID == "" {
		t.Fatalf("current = %+v, want the target %s on %v with a native id", cur, h.TargetSession, f.cfgB)
	}
	ws, _ := f.svc.Workspace(f.ctx, f.ws)
	if ws.Config != f.cfgB {
		t.Fatalf("workspace config %v, want %v", ws.Config, f.cfgB)
	}
	wakeups, _ := session.List[store.Wakeup](f.ctx, f.svc, f.ws)
	if len(wakeups) != 1 || wakeups[0].ID != w.ID || wakeups[0].Session != h.TargetSession || wakeups[0].Prompt != w.Prompt || !wakeups[0].At.Equal(w.At) {
		t.Fatalf("wakeups after completion = %+v", wakeups)
	}
	if err := f.co.Sessions().AssertWritable(f.ctx, f.ws); err != nil {
		t.Fatalf("reservation still held after completion: %v", err)
	}
	if n := len(f.eng.Launches()); n != 2 {
		t.Fatalf("launches = %d, want 2 (source, target)", n)
	}
	if m := f.eng.MaxRunning(f.ws); m != 1 {
		t.Fatalf("max running = %d, want 1", m)
	}
	fi, err := os.Lstat(h.ReportPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("document %s: %v, mode %v", h.ReportPath, err, fi)
	}
	if _, err := os.Stat(filepath.Join(f.root, ".ai", "handoffs", ".gitignore")); err != nil {
		t.Fatal(err)
	}
}

func TestTransferWithSummaryStoresReport(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Report: "# Report\nall good", ReportToken: enginetest.RightToken})
	h := f.create("r1", true)
	h = f.wait(h.ID, store.StateCompleted)
	if h.Report != "# Report\nall good" {
		t.Fatalf("report = %q", h.Report)
	}
	ls := f.eng.Launches()
	if len(ls) != 3 || ls[1].Req.Turn != transcript.ReportOnly || ls[1].Req.NativeID != f.src.NativeID {
		t.Fatalf("launches = %+v", ls)
	}
	doc, err := os.ReadFile(h.ReportPath)
	if err != nil || !strings.Contains(string(doc), "all good") {
		t.Fatalf("document: %v %q", err, doc)
	}
}

func TestReportWithWrongTokenIsRefused(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Report: "forged", ReportToken: enginetest.WrongToken})
	h := f.create("r1", true)
	h = f.wait(h.ID, store.StateFailed)
	if h.Report != "" {
		t.Fatal("report stored with a wrong token")
	}
	if err := f.eng.Launches()[1].ReportErr; !errors.Is(err, handoff.ErrTokenRejected) {
		t.Fatalf("report error = %v, want ErrTokenRejected", err)
	}
	if cur := f.current(); cur.ID != f.src.ID {
		t.Fatalf("current = %s, want the source restored", cur.ID)
	}
}

func TestCreateIdempotencyAndConflicts(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	req := handoff.Request{Workspace: f.ws, RequestID: "r1", SourceSession: f.src.ID, Target: f.cfgB}
	h1, err := f.co.Create(f.ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	f.wait(h1.ID, store.StateStarting)
	f.launches(2)
	again, err := f.co.Create(f.ctx, handoff.Request{Target: f.cfgB, SourceSession: f.src.ID, RequestID: " r1 ", Workspace: f.ws})
	if err != nil || again.ID != h1.ID {
		t.Fatalf("replay = %v, %v", again.ID, err)
	}
	cases := []struct {
		name string
		req  handoff.Request
		want error
	}{
		{"mismatch", handoff.Request{Workspace: f.ws, RequestID: "r1", SourceSession: f.src.ID, Target: f.cfgA}, handoff.ErrIdempotencyMismatch},
		{"pending", handoff.Request{Workspace: f.ws, RequestID: "r2", SourceSession: f.src.ID, Target: f.cfgB}, handoff.ErrTransferPending},
		{"empty id", handoff.Request{Workspace: f.ws, RequestID: "  ", Target: f.cfgB}, handoff.ErrInvalidRequest},
		{"long id", handoff.Request{Workspace: f.ws, RequestID: string(make([]byte, 129)), Target: f.cfgB}, baton.ErrInvalid},
		{"no engine", handoff.Request{Workspace: f.ws, RequestID: "r3", Target: baton.EngineConfig{}}, baton.ErrInvalid},
		{"unknown workspace", handoff.Request{Workspace: "nope", RequestID: "r3", Target: f.cfgB}, session.ErrNoWorkspace},
	}
	for _, c := range cases {
		if _, err := f.co.Create(f.ctx, c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
	if n := len(f.eng.Launches()); n != 2 {
		t.Fatalf("launches = %d, want 2: refused requests must have no side effect", n)
	}
}

func TestUnknownEngineAndStaleSourceHaveNoSideEffect(t *testing.T) {
	f := newFixture(t)
	_, err := f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: "r1", SourceSession: f.src.ID, Target: baton.EngineConfig{Engine: "nope"}})
	if !errors.Is(err, engine.ErrUnknownEngine) || !errors.Is(err, handoff.ErrInvalidRequest) {
		t.Fatalf("unknown engine: %v", err)
	}
	_, err = f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: "r2", SourceSession: "ses_other", Target: f.cfgB})
	if !errors.Is(err, handoff.ErrSourceChanged) {
		t.Fatalf("stale source: %v", err)
	}
	if f.eng.Running(f.ws) != 1 || f.co.Sessions().AssertWritable(f.ctx, f.ws) != nil {
		t.Fatal("a refused Create stopped the source or reserved the workspace")
	}
}

func TestTargetFailureRestoresSourceThenRetryCompletes(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyReject})
	h := f.create("r1", false)
	h = f.wait(h.ID, store.StateFailed)
	if cur := f.current(); cur.ID != f.src.ID || cur.Config != f.cfgA {
		t.Fatalf("current after failure = %+v", cur)
	}
	if err := f.co.Sessions().AssertWritable(f.ctx, f.ws); !errors.Is(err, session.ErrWorkspaceBusy) {
		t.Fatalf("failed handoff must keep the reservation: %v", err)
	}
	if _, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "sneak"}); !errors.Is(err, session.ErrWorkspaceBusy) {
		t.Fatalf("ordinary start while reserved: %v", err)
	}
	h, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Retry)
	if err != nil {
		t.Fatal(err)
	}
	h = f.wait(h.ID, store.StateCompleted)
	if h.Attempt != 2 || len(h.History) != 2 || h.History[0].Outcome != store.StateFailed {
		t.Fatalf("after retry: attempt %d history %+v", h.Attempt, h.History)
	}
	sessions, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	if len(sessions) != 3 || sessions[1].ActivationOrder != workspace.RolledBack {
		t.Fatalf("sessions = %+v, want the first target rolled back", sessions)
	}
}

func TestUnconfirmedStopBlocksRetryUntilStopConfirmed(t *testing.T) {
	f := newFixture(t)
	p := f.eng.Launches()[0].Proc
	p.SetStopOutcome(engine.Timeout)
	h := f.create("r1", false)
	h = f.wait(h.ID, store.StateFailed)
	if !h.StopUnconfirmed {
		t.Fatal("StopUnconfirmed not set")
	}
	if _, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Retry); !errors.Is(err, handoff.ErrStopUnconfirmed) {
		t.Fatalf("retry: %v", err)
	}
	if out, err := f.co.Stop(f.ctx, f.ws); err != nil || out.Confirmed() {
		t.Fatalf("stop again (still unconfirmed) = %v, %v", out, err)
	}
	p.SetStopOutcome(engine.Stopped)
	if out, err := f.co.Stop(f.ctx, f.ws); err != nil || !out.Confirmed() {
		t.Fatalf("stop = %v, %v", out, err)
	}
	h = f.wait(h.ID, store.StateCancelled)
	if f.eng.Running(f.ws) != 0 || f.co.Sessions().AssertWritable(f.ctx, f.ws) != nil {
		t.Fatal("cancelled handoff left a process or the reservation")
	}
	if again, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Retry); err != nil || again.State != store.StateCancelled {
		t.Fatalf("decide on cancelled = %v, %v", again.State, err)
	}
}

func TestGenerationTimeoutWithoutReportFails(t *testing.T) {
	f := newFixture(t, handoff.WithTimeouts(handoff.Timeouts{Generation: time.Minute}))
	f.eng.Push(enginetest.Script{Hang: true})
	h := f.create("r1", true)
	f.wait(h.ID, store.StateGenerating)
	f.waitTimerBy(time.Minute)
	f.clk.Advance(time.Minute)
	h = f.wait(h.ID, store.StateFailed)
	if f.eng.Running(f.ws) != 0 {
		t.Fatal("report-only turn still running after the timeout")
	}
	h, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Skip)
	if err != nil {
		t.Fatal(err)
	}
	h = f.wait(h.ID, store.StateCompleted)
	if h.GenerateSummary || h.Report != "" {
		t.Fatalf("skip kept the summary: %+v", h)
	}
}

func TestReconcileInterruptsAndNeverRelaunches(t *testing.T) {
	// The same node restarting: the same instance id takes its lease back.
	f := newFixtureAs(t, "node-1")
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)
	launches := len(f.eng.Launches())
	// Crash: the engine's processes die with the host; the coordinator is
	// dropped without Shutdown.
	f.eng.CrashAll()
	co2, err := handoff.NewOn(f.st, engine.Registry{"demo": f.eng}, session.Options{Clock: f.clk, InstanceID: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co2.Shutdown(context.Background()) })
	got, err := co2.Reconcile(f.ctx)
	if err != nil || len(got) != 1 || got[0].State != store.StateInterrupted {
		t.Fatalf("reconcile = %+v, %v", got, err)
	}
	if n := len(f.eng.Launches()); n != launches {
		t.Fatalf("reconcile launched: %d -> %d", launches, n)
	}
	cur, err := co2.Sessions().Current(f.ctx, f.ws)
	if err != nil || cur.ID != f.src.ID {
		t.Fatalf("current after reconcile = %v, %v", cur.ID, err)
	}
}

func TestDecideValidation(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)
	if _, err := f.co.Decide(f.ctx, f.ws, h.ID, "explode"); !errors.Is(err, handoff.ErrInvalidRequest) {
		t.Fatalf("unknown action: %v", err)
	}
	if _, err := f.co.Decide(f.ctx, "other", h.ID, handoff.Cancel); !errors.Is(err, handoff.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
	if _, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Retry); !errors.Is(err, handoff.ErrTransferRunning) {
		t.Fatalf("retry while running: %v", err)
	}
	//lint:ignore SA1012 a nil context is what is being tested
	if _, err := f.co.Decide(nil, f.ws, h.ID, handoff.Cancel); !errors.Is(err, baton.ErrInvalid) { //nolint:staticcheck
		t.Fatalf("nil ctx: %v", err)
	}
	c, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Cancel)
	if err != nil || c.State != store.StateCancelled {
		t.Fatalf("cancel = %v, %v", c.State, err)
	}
	if cur := f.current(); cur.ID != f.src.ID {
		t.Fatalf("current after cancel = %s", cur.ID)
	}
}

func TestSubmitReportValidation(t *testing.T) {
	f := newFixture(t, handoff.WithTimeouts(handoff.Timeouts{Generation: time.Hour}))
	f.eng.Push(enginetest.Script{Hang: true})
	h := f.create("r1", true)
	f.wait(h.ID, store.StateGenerating)
	f.launches(2)
	cred := f.eng.Launches()[1].Req.Report
	tok := cred.Token.Reveal()
	cases := []struct {
		name string
		ws   baton.WorkspaceID
		tok  string
		text string
		want error
	}{
		{"empty", f.ws, tok, " \n\t ", handoff.ErrInvalidRequest},
		{"too long", f.ws, tok, strings.Repeat("é", baton.MaxReportChars+1), handoff.ErrInvalidRequest},
		{"wrong token", f.ws, "not-the-token", "a report", handoff.ErrTokenRejected},
		{"another workspace", "other", tok, "a report", handoff.ErrNotFound},
	}
	for _, c := range cases {
		if err := f.co.SubmitReport(f.ctx, c.ws, h.ID, c.tok, c.text); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if got, _ := f.co.Get(f.ctx, f.ws, h.ID); got.Report != "" {
		t.Fatal("a refused report was stored")
	}
	max := strings.Repeat("é", baton.MaxReportChars)
	if err := f.co.SubmitReport(f.ctx, f.ws, h.ID, tok, "  "+max+"\n"); err != nil {
		t.Fatalf("report of exactly %d characters: %v", baton.MaxReportChars, err)
	}
	if err := f.co.SubmitReport(f.ctx, f.ws, h.ID, tok, max); err != nil {
		t.Fatalf("the same report again: %v", err)
	}
	if err := f.co.SubmitReport(f.ctx, f.ws, h.ID, tok, "different"); !errors.Is(err, handoff.ErrReportConflict) {
		t.Fatalf("a different report: %v", err)
	}
	// Refusals after the report was stored are counted and logged, never
	// written over the handoff's outcome.
	if err := f.co.SubmitReport(f.ctx, f.ws, h.ID, tok, " "); !errors.Is(err, handoff.ErrInvalidRequest) {
		t.Fatalf("an empty report after the report: %v", err)
	}
	if got, err := f.co.Get(f.ctx, f.ws, h.ID); err != nil || got.Error != "" {
		t.Fatalf("after refused later submissions the handoff's error is %q (%v), want none", got.Error, err)
	}
	if _, n := handoff.ReportCounts(f.co); n != 2 {
		t.Fatalf("late reports = %d, want 2", n)
	}
	if _, err := handoff.New(nil, engine.Registry(nil)); !errors.Is(err, baton.ErrInvalid) {
		t.Fatalf("New(nil service): %v", err)
	}
	if _, err := handoff.New(&session.Service{}, engine.Registry(nil)); !errors.Is(err, baton.ErrInvalid) {
		t.Fatalf("New(a service not made by session.New): %v", err)
	}
	if _, err := handoff.New(f.svc, nil); !errors.Is(err, baton.ErrInvalid) {
		t.Fatalf("New(nil registry): %v", err)
	}
}

func TestArchivedWorkspaceTakesNoTransfer(t *testing.T) {
	f := newFixture(t)
	if err := f.svc.ArchiveWorkspace(f.ctx, f.ws); !errors.Is(err, session.ErrSessionRunning) {
		t.Fatalf("archive while a session runs: %v", err)
	}
	if _, err := f.svc.Stop(f.ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.ArchiveWorkspace(f.ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	_, err := f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: "r1", SourceSession: f.src.ID, Target: f.cfgB})
	if !errors.Is(err, session.ErrArchived) {
		t.Fatalf("create on an archived workspace: %v", err)
	}
	if _, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hi"}); !errors.Is(err, session.ErrArchived) {
		t.Fatalf("start on an archived workspace: %v", err)
	}
}
