package handoff_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// The report-only turn runs in the workspace's root, like every other
// launch of the workspace.
func TestReportOnlyTurnRunsInTheWorkspaceRoot(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Report: "# report", ReportToken: enginetest.RightToken})
	h := f.create("r1", true)
	f.wait(h.ID, store.StateCompleted)
	var saw bool
	for _, l := range f.eng.Launches() {
		if l.Req.Dir != f.root {
			t.Errorf("launch %d (%s, %s): Dir = %q, want %q", l.N, l.Req.Mode, l.Req.Turn, l.Req.Dir, f.root)
		}
		saw = saw || l.Req.Turn == transcript.ReportOnly
	}
	if !saw {
		t.Fatal("no report-only turn was launched")
	}
}

// A submission with this attempt's token whose text is refused is what the
// user sees once the turn ends without a report; a forged one changes
// nothing and is counted.
func TestRefusedReportIsKeptAndForgedOnesAreCounted(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Report: strings.Repeat("x", baton.MaxReportChars+1), ReportToken: enginetest.RightToken})
	h := f.create("r1", true)
	h = f.wait(h.ID, store.StateFailed)
	if !strings.Contains(h.Error, "ended without a report") || !strings.Contains(h.Error, "refused") || !strings.Contains(h.Error, "24000") {
		t.Fatalf("error = %q, want the turn's end and the refusal (1..24000 characters)", h.Error)
	}
	if n := len(h.History); n == 0 || h.History[n-1].Error != h.Error {
		t.Fatalf("history = %+v, want the refusal in the last attempt's record", h.History)
	}

	f.eng.Push(enginetest.Script{Report: "# a report", ReportToken: enginetest.WrongToken})
	if _, err := f.co.Decide(f.ctx, f.ws, h.ID, handoff.Retry); err != nil {
		t.Fatal(err)
	}
	h = f.wait(h.ID, store.StateFailed)
	if strings.Contains(h.Error, "refused") || !strings.Contains(h.Error, "ended without a report") {
		t.Fatalf("error = %q: a forged submission must not reach what the user sees", h.Error)
	}
	if got, _ := handoff.ReportCounts(f.co); got != 1 {
		t.Fatalf("RejectedReports = %d, want 1", got)
	}
}

// A target that never confirms readiness fails the attempt once the
// readiness timeout passes on the coordinator's clock.
func TestTargetReadinessTimesOut(t *testing.T) {
	f := newFixture(t, handoff.WithTimeouts(handoff.Timeouts{Ready: time.Minute, Lease: time.Hour}))
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)
	f.waitTimerBy(time.Minute)
	f.clk.Advance(time.Minute)
	h = f.wait(h.ID, store.StateFailed)
	if !strings.Contains(h.Error, "readiness within 1m0s") || h.StopUnconfirmed {
		t.Fatalf("handoff = %+v, want a readiness timeout with a confirmed stop", h)
	}
	if f.eng.Running(f.ws) != 0 {
		t.Fatal("the target still runs")
	}
}

// Watch replays a workspace's committed changes after a sequence number,
// then follows new ones; Wait returns once the transfer settles; List
// returns the workspace's transfers.
func TestWatchWaitList(t *testing.T) {
	f := newFixture(t)
	h := f.create("r1", false)
	done, err := f.co.Wait(f.ctx, f.ws, h.ID)
	if err != nil || done.State != store.StateCompleted {
		t.Fatalf("Wait = %+v, %v; want completed", done, err)
	}
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	var states []store.HandoffState
	var last int64
	for ch, err := range f.co.Watch(ctx, f.ws, 0) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Seq <= last {
			t.Fatalf("seq %d after %d", ch.Seq, last)
		}
		last = ch.Seq
		if ch.Handoff != nil {
			states = append(states, ch.Handoff.State)
			if ch.Handoff.State == store.StateCompleted {
				break
			}
		}
	}
	want := []store.HandoffState{store.StateStopping, store.StateStarting, store.StateCompleted}
	if strings.Join(stateNames(states), ",") != strings.Join(stateNames(want), ",") {
		t.Fatalf("handoff states in the feed = %v, want %v", states, want)
	}

	// Resuming after the last seen number yields only what comes later.
	next := make(chan store.Change, 1)
	go func() {
		for ch, err := range f.co.Watch(ctx, f.ws, last) {
			if err == nil {
				next <- ch
			}
			return
		}
	}()
	if out, err := f.co.Stop(f.ctx, f.ws); err != nil || !out.Confirmed() {
		t.Fatalf("Stop = %s, %v", out, err)
	}
	select {
	case ch := <-next:
		if ch.Seq != last+1 || ch.Session == nil {
			t.Fatalf("followed change = %+v, want seq %d of a session", ch, last+1)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Watch did not follow a new commit")
	}

	all, err := f.co.List(f.ctx, f.ws)
	if err != nil || len(all) != 1 || all[0].ID != h.ID {
		t.Fatalf("List = %+v, %v", all, err)
	}
	for ch, err := range f.co.Watch(f.ctx, "nope", 0) {
		if !errors.Is(err, session.ErrNoWorkspace) {
			t.Fatalf("Watch of an unknown workspace: %+v, %v", ch, err)
		}
	}
}

func stateNames(s []store.HandoffState) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

// Every entry point answers a bad or unknown workspace the same way.
func TestValidationIsTheSameEverywhere(t *testing.T) {
	f := newFixture(t)
	_, err := f.co.Create(f.ctx, handoff.Request{Workspace: "nope", RequestID: "r", Target: f.cfgB})
	if !errors.Is(err, session.ErrNoWorkspace) || errors.Is(err, handoff.ErrNotFound) {
		t.Fatalf("Create in an unknown workspace: %v", err)
	}
	_, err = f.svc.Start(f.ctx, session.TurnRequest{Workspace: "", Prompt: "x"})
	if baton.ErrorCode(err) != baton.ErrInvalid.Code {
		t.Fatalf("Start with an empty workspace: %v (code %s)", err, baton.ErrorCode(err))
	}
	_, err = f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: "ws-x", Config: baton.EngineConfig{Engine: "nobody"}})
	if !errors.Is(err, baton.ErrInvalid) || !errors.Is(err, engine.ErrUnknownEngine) {
		t.Fatalf("CreateWorkspace with an unknown engine: %v", err)
	}
	_, err = f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: "r", SourceSession: f.src.ID, Target: baton.EngineConfig{Engine: "nobody"}})
	if !errors.Is(err, baton.ErrInvalid) || !errors.Is(err, engine.ErrUnknownEngine) {
		t.Fatalf("Create with an unknown engine: %v", err)
	}
}

// A target whose first turn ends just before the completion commits is
// recorded ended, whichever of the two the store sees first: the
// workspace's current session is never a stale "running" target.
func TestTargetEndingBeforeCompletionStaysEnded(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	ls := f.launches2(2)
	target := ls[1].Proc
	// End the first turn, record its end, then confirm readiness.
	target.Finish(0, nil)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := session.List[store.Session](f.ctx, f.svc, f.ws)
		if err != nil {
			t.Fatal(err)
		}
		if s[len(s)-1].Status == store.SessionEnded || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	target.Release("native-target")
	h = f.wait(h.ID, store.StateCompleted)
	ss, err := session.List[store.Session](f.ctx, f.svc, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if s.ID == h.TargetSession && s.Status != store.SessionEnded {
			t.Fatalf("target %+v: want ended", s)
		}
	}
}

// A Shutdown whose stop was confirmed leaves nothing unconfirmed: after a
// restart the user may retry at once.
func TestShutdownWithConfirmedStopAllowsRetry(t *testing.T) {
	f := newFixture(t)
	src := f.launches2(1)[0].Proc
	src.SetStopOutcome(engine.Timeout) // the source's first stop is not confirmed
	h := f.create("r1", false)
	h = f.wait(h.ID, store.StateFailed)
	if !h.StopUnconfirmed {
		t.Fatalf("want stop unconfirmed first: %+v", h)
	}
	src.SetStopOutcome(engine.Stopped) // Shutdown's stop is
	if err := f.co.Shutdown(f.ctx); err != nil {
		t.Fatal(err)
	}
	co2, err := handoff.NewOn(f.st, engine.Registry{"demo": f.eng}, session.Options{Clock: f.clk})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = co2.Shutdown(context.Background()) }()
	got, err := co2.Get(f.ctx, f.ws, h.ID)
	if err != nil || got.State != store.StateInterrupted || got.StopUnconfirmed {
		t.Fatalf("after a confirmed shutdown stop: %+v, %v", got, err)
	}
}

func (f *fixture) launches2(n int) []enginetest.Launch {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, 5*time.Second)
	defer cancel()
	ls, err := f.eng.WaitLaunches(ctx, n)
	if err != nil {
		f.t.Fatalf("waiting for %d launches: %v", n, err)
	}
	return ls
}

// A Stop sent to a process that does not drive the transfer is carried out
// by the one that does: it is never taken as confirmed by a process that
// started nothing.
func TestStopOnAnotherNodeIsConfirmedByTheDrivingNode(t *testing.T) {
	f := newFixtureAs(t, "node-a")
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)

	engB := enginetest.New(enginetest.Options{Clock: f.clk})
	t.Cleanup(engB.Close)
	b, err := handoff.NewOn(f.st, engine.Registry{"demo": engB}, session.Options{Clock: f.clk, InstanceID: "node-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })

	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	out, err := b.Stop(ctx, f.ws)
	if err != nil || out != engine.Stopped {
		t.Fatalf("Stop through node b = %s, %v; want stopped", out, err)
	}
	got := f.wait(h.ID, store.StateCancelled)
	if f.eng.Running(f.ws) != 0 {
		t.Fatalf("node a's target still runs after a confirmed stop: %+v", got)
	}
	if len(engB.Launches()) != 0 {
		t.Fatal("node b launched something")
	}
}

// When the driving node dies, a Stop sent to another node cannot be
// confirmed: once the lease lapses the transfer fails with its stop
// unconfirmed and the workspace stays reserved.
func TestStopAfterTheDrivingNodeDiedIsUnconfirmed(t *testing.T) {
	const ttl = 30 * time.Second
	// Node a sees the store without its notifications: frozen, it would
	// not hear of the stop request either.
	mem := memstore.New()
	f := newFixtureOnAs(t, silentStore{mem}, "node-a", handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}))
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)
	// Node a is frozen: its clock stands still, so it renews nothing,
	// while node b's runs past the lease.
	clkB := clock.NewFake(f.clk.Now().Add(ttl + time.Second))
	engB := enginetest.New(enginetest.Options{Clock: clkB})
	t.Cleanup(engB.Close)
	b, err := handoff.NewOn(mem, engine.Registry{"demo": engB}, session.Options{Clock: clkB, InstanceID: "node-b"}, handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	out, err := b.Stop(f.ctx, f.ws)
	if err != nil || out.Confirmed() {
		t.Fatalf("Stop = %s, %v; want unconfirmed", out, err)
	}
	got, err := b.Get(f.ctx, f.ws, h.ID)
	if err != nil || got.State != store.StateFailed || !got.StopUnconfirmed {
		t.Fatalf("handoff = %+v, %v; want failed, stop unconfirmed", got, err)
	}
	if err := b.Sessions().AssertWritable(f.ctx, f.ws); !errors.Is(err, session.ErrWorkspaceBusy) {
		t.Fatalf("the workspace must stay reserved: %v", err)
	}
}

// The facts gathered beside the report ride in the commit that enters
// starting, are stored on the handoff, and reach the target's prompt.
func TestFactsAreStoredAndBriefed(t *testing.T) {
	root := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "first commit"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git: %v: %s", err, out)
		}
	}
	f := newFixture(t, handoff.WithBriefing(handoff.Briefing{Facts: facts.Func(facts.Options{})}))
	// The fixture's workspace has its own root; point a new one at the
	// repository.
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: "ws-git", Root: root, Config: f.cfgA}); err != nil {
		t.Fatal(err)
	}
	src, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: "ws-git", Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := f.co.Create(f.ctx, handoff.Request{Workspace: "ws-git", RequestID: "r1", SourceSession: src.ID, Target: f.cfgB})
	if err != nil {
		t.Fatal(err)
	}
	h, err = f.co.Wait(f.ctx, "ws-git", h.ID)
	if err != nil || h.State != store.StateCompleted {
		t.Fatalf("Wait = %+v, %v", h, err)
	}
	if !strings.Contains(h.Facts, "main") {
		t.Fatalf("facts = %q, want the branch", h.Facts)
	}
	var prompt string
	for _, l := range f.eng.Launches() {
		if l.Req.Session == h.TargetSession {
			prompt = l.Req.Prompt
		}
	}
	if !strings.Contains(prompt, "main") || !strings.Contains(prompt, "first commit") && !strings.Contains(prompt, "HEAD") {
		t.Fatalf("the target's prompt lacks the facts:\n%s", prompt)
	}
}

// reaperEngine gives the scripted engine a scripted engine.Reaper.
type reaperEngine struct {
	*enginetest.Engine
	out engine.StopOutcome
}

func (r reaperEngine) ReapLaunch(context.Context, baton.LaunchID) (engine.StopOutcome, error) {
	return r.out, nil
}

// After the process driving a transfer dies, a Reconcile that cannot
// confirm its launches gone leaves the transfer interrupted with its stop
// unconfirmed: no retry, and the workspace stays held.
func TestReconcileKeepsUnreapedLaunchesHeld(t *testing.T) {
	const ttl = 30 * time.Second
	f := newFixtureAs(t, "node-a", handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}))
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyHold})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateStarting)
	f.launches(2)

	for i, tc := range []struct {
		out  engine.StopOutcome
		want bool // stop unconfirmed
	}{{engine.Timeout, true}, {engine.Stopped, false}} {
		// Each node starts once the previous one's lease has lapsed.
		clkB := clock.NewFake(f.clk.Now().Add(time.Duration(i+1) * (ttl + time.Second)))
		b, err := handoff.NewOn(f.st, engine.Registry{"demo": reaperEngine{f.eng, tc.out}}, session.Options{Clock: clkB, InstanceID: "node-b-" + string(tc.out)}, handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Reconcile(f.ctx); err != nil {
			t.Fatal(err)
		}
		got, err := b.Get(f.ctx, f.ws, h.ID)
		if err != nil || got.State != store.StateInterrupted || got.StopUnconfirmed != tc.want {
			t.Fatalf("reap %s: handoff = %+v, %v; want interrupted, stop unconfirmed %v", tc.out, got, err, tc.want)
		}
		_, err = b.Decide(f.ctx, f.ws, h.ID, handoff.Retry)
		if tc.want && !errors.Is(err, handoff.ErrStopUnconfirmed) {
			t.Fatalf("retry with an unreaped launch: %v", err)
		}
		if !tc.want && err != nil {
			t.Fatalf("retry once reaped: %v", err)
		}
		if tc.want {
			// The node stops; its lease lapses for the next one.
			if err := b.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		} else {
			t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
		}
	}
}

// Queued instructions not known to be delivered are listed, by id and
// state, in the target's prompt; a delivered one is not.
func TestBriefingListsUndeliveredInstructions(t *testing.T) {
	f := newFixture(t)
	now := f.clk.Now()
	err := f.st.Update(f.ctx, func(tx store.Tx) error {
		for _, i := range []store.Instruction{
			{ID: "ins-pending", Workspace: f.ws, Text: "also fix the docs", State: store.InstructionPending},
			{ID: "ins-unknown", Workspace: f.ws, Text: "run the linter", State: store.InstructionUnknown},
			{ID: "ins-done", Workspace: f.ws, Text: "say hello", State: store.InstructionDelivered},
		} {
			i.CreatedAt, i.UpdatedAt = now, now
			if err := tx.PutInstruction(i); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h := f.create("r1", false)
	h = f.wait(h.ID, store.StateCompleted)
	var prompt string
	for _, l := range f.eng.Launches() {
		if l.Req.Session == h.TargetSession {
			prompt = l.Req.Prompt
		}
	}
	for _, want := range []string{"ins-pending", "pending", "also fix the docs", "ins-unknown", "unknown", "run the linter"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the target's prompt lacks %q", want)
		}
	}
	if strings.Contains(prompt, "ins-done") {
		t.Errorf("a delivered instruction is listed:\n%s", prompt)
	}
}

// silentStore is a store without its optional capabilities (no
// notifications).
type silentStore struct{ store.Store }

// lateNotifier delivers a store's notifications, but a subscription made
// while it is armed waits until it is released: the goroutine that
// subscribes is scheduled late.
type lateNotifier struct {
	store.Store
	n       store.Notifier
	armed   chan struct{}
	pending chan struct{} // one value per subscription waiting
}

func (s lateNotifier) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	select {
	case <-s.armed:
	default:
		s.pending <- struct{}{}
		<-s.armed
	}
	return s.n.Subscribe(ws)
}

// A stop requested between the driving process's take and its
// subscription to the workspace's changes is carried out all the same: the
// driving process looks once right after subscribing (the request notified
// nobody). It used to wait for the next lease renewal, forever on a clock
// that stands still.
func TestStopRequestedBeforeTheDriverSubscribedIsCarriedOut(t *testing.T) {
	mem := memstore.New()
	late := lateNotifier{Store: mem, n: mem, armed: make(chan struct{}), pending: make(chan struct{}, 8)}
	f := newFixtureOnAs(t, late, "node-a")
	f.eng.Push(enginetest.Script{Ready: enginetest.ReadyReject})
	h := f.create("r1", false)
	f.wait(h.ID, store.StateFailed) // node a keeps the reservation for a decision
	select {
	case <-late.pending: // node a's follower waits to subscribe
	case <-time.After(10 * time.Second):
		t.Fatal("node a never subscribed to the workspace")
	}

	engB := enginetest.New(enginetest.Options{Clock: f.clk})
	t.Cleanup(engB.Close)
	b, err := handoff.NewOn(mem, engine.Registry{"demo": engB}, session.Options{Clock: f.clk, InstanceID: "node-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Shutdown(context.Background()) })
	type result struct {
		out engine.StopOutcome
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
	defer cancel()
	go func() {
		out, err := b.Stop(ctx, f.ws)
		done <- result{out, err}
	}()
	for { // a bounded poll until node b has recorded the request
		var got store.Handoff
		if err := mem.View(f.ctx, func(tx store.Tx) (err error) { got, err = tx.GetHandoff(h.ID); return err }); err != nil {
			t.Fatal(err)
		}
		if got.StopRequested {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("node b never recorded the stop request")
		}
		time.Sleep(time.Millisecond)
	}
	close(late.armed) // node a subscribes only now
	r := <-done
	if r.err != nil || r.out != engine.Stopped {
		t.Fatalf("Stop through node b = %s, %v; want stopped by node a", r.out, r.err)
	}
	f.wait(h.ID, store.StateCancelled)
}

// slowTargetStart holds the start of a transfer's target until released.
type slowTargetStart struct {
	engine.Engine
	entered, release chan struct{}
}

func (s slowTargetStart) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	if req.Attempt > 0 && req.Turn == transcript.Normal {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Engine.Start(ctx, req)
}

// The readiness timeout counts from the commit that entered starting: a
// launch that takes the whole timeout leaves the target no more time, it
// does not start the count again.
func TestReadyTimeoutCountsFromEnteringStarting(t *testing.T) {
	const ready = time.Minute
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	eng := enginetest.New(enginetest.Options{Clock: clk, Default: enginetest.Script{Ready: enginetest.ReadyHold}})
	t.Cleanup(eng.Close)
	slow := slowTargetStart{Engine: eng, entered: make(chan struct{}), release: make(chan struct{})}
	st := memstore.New()
	co, err := handoff.NewOn(st, engine.Registry{"demo": slow}, session.Options{Clock: clk}, handoff.WithTimeouts(handoff.Timeouts{Ready: ready}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	ctx := context.Background()
	cfg := baton.EngineConfig{Engine: "demo", Model: "demo-1"}
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws-1", Name: "demo", Root: t.TempDir(), Config: cfg}); err != nil {
		t.Fatal(err)
	}
	eng.Push(enginetest.Script{}) // the source confirms readiness at once
	src, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: "ws-1", Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := co.Create(ctx, handoff.Request{Workspace: "ws-1", RequestID: "r1", SourceSession: src.ID, Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-slow.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the target was never launched")
	}
	clk.Advance(ready + time.Second) // the launch takes longer than the timeout
	close(slow.release)
	deadline := time.Now().Add(10 * time.Second)
	for { // a bounded poll: no clock move is needed any more
		got, err := co.Get(ctx, "ws-1", h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == store.StateFailed {
			if !strings.Contains(got.Error, "did not confirm readiness") {
				t.Fatalf("failed with %q, want the readiness timeout", got.Error)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the target is still %s past its readiness deadline", got.State)
		}
		time.Sleep(time.Millisecond)
	}
}
