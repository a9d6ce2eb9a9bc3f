//go:build linux

package crashtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// freezer is the exec engine of a node that freezes (as under SIGSTOP or a
// long GC pause) once, at the start of a transfer's target: after the
// commit that fenced the launch in and recorded it, before the spawn. It
// keeps the exec engine's capabilities (engine.Reaper among them).
type freezer struct {
	*exec.Engine
	// hide drops StartRequest.Admit: an engine without two-phase starts.
	hide   bool
	frozen chan baton.LaunchID // the frozen launch, once frozen
	wake   chan struct{}       // closed to wake the node
	woke   chan woken          // Start's outcome after the wake
	// again, when set, freezes the node again right after the woken
	// Start, until it is closed.
	again chan struct{}
	once  sync.Once
}

func (f *freezer) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	freeze := false
	if req.Attempt > 0 && req.Turn == transcript.Normal {
		f.once.Do(func() { freeze = true })
	}
	if !freeze {
		return f.Engine.Start(ctx, req)
	}
	f.frozen <- req.LaunchID
	<-f.wake
	if f.hide {
		req.Admit = nil
	}
	p, err := f.Engine.Start(ctx, req)
	f.woke <- woken{p, err}
	if f.again != nil {
		<-f.again
	}
	return p, err
}

// woken is what the frozen start returned.
type woken struct {
	p   engine.Process
	err error
}

// TestFrozenLauncherFenced: node A drives a transfer and freezes between
// the commit that records its target's launch and the spawn. Node B (whose
// clock runs an hour ahead, so A's lease has lapsed for it) reconciles the
// transfer: it reaps A's launch (nothing runs yet, so its record is closed)
// and takes the reservation. The user retries on B, whose target runs.
// When A wakes (before or after the retry), its launch is refused by the
// fence at admission and its held child is killed: A's agent never ran
// (the stand-in agent writes a file named by its launch id first thing),
// and no process of A's launch is left. Without two-phase starts the
// re-check after the start stops A's process at once (best effort: the
// agent may have run for that moment).
func TestFrozenLauncherFenced(t *testing.T) {
	tests := []struct {
		name        string
		hide        bool  // the engine does not hold the process
		afterRetry  bool  // wake A after B's retry completed (reservation released)
		wantRefusal error // A's Start error (with two-phase starts)
	}{
		{"woken-after-takeover", false, false, workspace.ErrStaleEpoch},
		{"woken-after-retry", false, true, session.ErrLaunchRefused},
		{"no-two-phase/woken-after-takeover", true, false, nil},
		{"no-two-phase/woken-after-retry", true, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := frozenTransfer(t, tt.hide, nil)
			ctx, st, frz, coB, frozen, h, run, ran := f.ctx, f.st, f.frz, f.coB, f.frozen, f.h, f.run, f.ran

			// B takes over: A's launch is reaped (not running: its record
			// closed) and the transfer interrupted under a new epoch.
			got, err := coB.Reconcile(ctx)
			if err != nil || len(got) != 1 || got[0].State != store.StateInterrupted {
				t.Fatalf("B's Reconcile = %+v, %v; want the transfer interrupted", got, err)
			}
			if l := launchRecord(t, ctx, st, frozen); !l.Gone {
				t.Fatalf("A's launch after B's reconcile: %+v; want gone", l)
			}
			retry := func() {
				t.Helper()
				if _, err := coB.Decide(ctx, "ws", h.ID, handoff.Retry); err != nil {
					t.Fatalf("Retry on B: %v", err)
				}
				done, err := coB.Wait(ctx, "ws", h.ID)
				if err != nil || done.State != store.StateCompleted {
					t.Fatalf("transfer after the retry = %s (%s), %v; want completed", done.State, done.Error, err)
				}
			}
			if tt.afterRetry {
				retry()
			}

			close(frz.wake)
			var w woken
			select {
			case w = <-frz.woke:
			case <-ctx.Done():
				t.Fatal("node A's start never returned")
			}
			if tt.hide {
				// The engine started the agent; the re-check after the
				// start stops it at once.
				if w.err != nil {
					t.Fatalf("A's start after waking: %v", w.err)
				}
				select {
				case <-w.p.Done():
				case <-ctx.Done():
					t.Fatal("A's fenced-out process was not stopped")
				}
				if !w.p.Exit().Stopped {
					t.Errorf("A's process ended with %+v; want stopped", w.p.Exit())
				}
			} else {
				if _, err := os.Stat(filepath.Join(ran, string(frozen))); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("A's fenced-out agent ran (its file: %v)", err)
				}
				if !errors.Is(w.err, tt.wantRefusal) || w.p != nil {
					t.Errorf("A's start after waking: %v, %v; want %v", w.p, w.err, tt.wantRefusal)
				}
			}
			for _, p := range scan(run) {
				if p.launch == string(frozen) {
					t.Errorf("a process of A's launch still runs: pid %d", p.pid)
				}
			}
			if !tt.afterRetry {
				retry()
			}

			// B's target is the one agent of the transfer, and it runs.
			cur, err := coB.Sessions().Current(ctx, "ws")
			if err != nil {
				t.Fatal(err)
			}
			var live []store.Launch
			if err := st.View(ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches("ws"); return err }); err != nil {
				t.Fatal(err)
			}
			if len(live) != 1 || live[0].Session != cur.ID || live[0].ID == frozen || !live[0].Admitted {
				t.Fatalf("live launches %+v; want B's admitted target %s alone", live, cur.ID)
			}
			if _, err := os.Stat(filepath.Join(ran, string(live[0].ID))); err != nil {
				t.Errorf("B's target never ran: %v", err)
			}
		})
	}
}

// newNode is a coordinator on st, over a session service with options
// so, launching through eng (registered as "agent"), shut down at the end
// of the test.
func newNode(t *testing.T, st store.Store, eng engine.Engine, so session.Options) *handoff.Coordinator {
	t.Helper()
	reg := engine.Registry{"agent": eng}
	svc, err := session.New(st, reg, so)
	if err != nil {
		t.Fatal(err)
	}
	co, err := handoff.New(svc, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := co.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return co
}

func launchRecord(t *testing.T, ctx context.Context, st store.Store, id baton.LaunchID) store.Launch {
	t.Helper()
	var l store.Launch
	if err := st.View(ctx, func(tx store.Tx) (err error) { l, err = tx.GetLaunch(id); return err }); err != nil {
		t.Fatal(err)
	}
	return l
}

// frozen is a transfer whose driving node A froze at its target's spawn.
type frozen struct {
	ctx      context.Context
	st       store.Store
	frz      *freezer
	coA, coB *handoff.Coordinator
	frozen   baton.LaunchID // A's target launch
	h        store.Handoff
	run, ran string // CRASHTEST_RUN and CRASHTEST_RAN of every agent
}

// frozenTransfer starts a source on node A, asks A for a transfer and
// returns once A froze at its target's spawn. Node B shares A's store, runs
// its clock an hour ahead (A's lease has lapsed for it) and reaps through
// reapB's wrapper of its engine when set.
func frozenTransfer(t *testing.T, hide bool, reapB func(*exec.Engine) engine.Engine) frozen {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	run, ran := t.TempDir(), t.TempDir()
	t.Cleanup(func() { killRun(t, run) })
	env := append(os.Environ(), "CRASHTEST_RUN="+run, "CRASHTEST_RAN="+ran)
	st := memstore.New()
	frz := &freezer{Engine: newAgentEngine(t, false, env), hide: hide,
		frozen: make(chan baton.LaunchID, 1), wake: make(chan struct{}), woke: make(chan woken, 1)}
	var engB engine.Engine = newAgentEngine(t, false, env)
	if reapB != nil {
		engB = reapB(engB.(*exec.Engine))
	}
	coA := newNode(t, st, frz, session.Options{InstanceID: "node-a"})
	coB := newNode(t, st, engB, session.Options{InstanceID: "node-b", Clock: clock.NewFake(time.Now().Add(time.Hour))})
	root := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := coA.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws", Root: root, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: "agent", Model: "small"}}); err != nil {
		t.Fatal(err)
	}
	src, err := coA.Sessions().Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Fix the parser."})
	if err != nil {
		t.Fatal(err)
	}
	h, err := coA.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: src.ID,
		Target: baton.EngineConfig{Engine: "agent", Model: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	f := frozen{ctx: ctx, st: st, frz: frz, coA: coA, coB: coB, h: h, run: run, ran: ran}
	select {
	case f.frozen = <-frz.frozen:
	case <-ctx.Done():
		t.Fatal("node A never reached its target's spawn")
	}
	return f
}

// reapHook is the exec engine with a hook that runs once after the first
// ReapLaunch scanned (and found nothing or stopped what it found).
type reapHook struct {
	*exec.Engine
	once  sync.Once
	after func()
	mu    sync.Mutex
	reaps map[baton.LaunchID][]engine.StopOutcome
}

func (r *reapHook) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	out, err := r.Engine.ReapLaunch(ctx, id)
	r.mu.Lock()
	r.reaps[id] = append(r.reaps[id], out)
	r.mu.Unlock()
	r.once.Do(r.after)
	return out, err
}

// TestReapRacesAdmission: node B's reap of frozen node A's target launch
// scans and finds nothing; A then wakes, spawns its child held, and its
// admission commits (the epoch is still A's) before B's reap closes the
// record. B's reap must see the admission, reap again, and find and stop
// A's agent: when B's Reconcile returns, no process of A's launch runs and
// its record is closed. (A freezes again right after its start, so that
// it does not complete the transfer before B takes it over.)
func TestReapRacesAdmission(t *testing.T) {
	var (
		f    frozen
		hook *reapHook
	)
	f = frozenTransfer(t, false, func(e *exec.Engine) engine.Engine {
		hook = &reapHook{Engine: e, reaps: map[baton.LaunchID][]engine.StopOutcome{}, after: func() {
			close(f.frz.wake)
			if w := <-f.frz.woke; w.err != nil {
				t.Errorf("A's start after waking: %v; want admitted (B has not taken the reservation yet)", w.err)
			}
		}}
		return hook
	})
	f.frz.again = make(chan struct{})
	t.Cleanup(func() { close(f.frz.again) })
	got, err := f.coB.Reconcile(f.ctx)
	if err != nil || len(got) != 1 || got[0].State != store.StateInterrupted {
		t.Fatalf("B's Reconcile = %+v, %v; want the transfer interrupted", got, err)
	}
	l := launchRecord(t, f.ctx, f.st, f.frozen)
	if !l.Gone || !l.Admitted {
		t.Errorf("A's launch after B's reconcile: %+v; want admitted, then gone", l)
	}
	hook.mu.Lock()
	reaps := hook.reaps[f.frozen]
	hook.mu.Unlock()
	if want := []engine.StopOutcome{engine.NotRunning, engine.Stopped}; !slices.Equal(reaps, want) {
		t.Errorf("B's reaps of A's launch: %v; want %v (the second after the admission)", reaps, want)
	}
	for _, p := range scan(f.run) {
		if p.launch == string(f.frozen) {
			t.Errorf("a process of A's launch still runs after B's reap: pid %d", p.pid)
		}
	}
}

// countingStore counts the Updates that commit.
type countingStore struct {
	store.Store
	mu      sync.Mutex
	commits int
}

func (c *countingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := c.Store.Update(ctx, fn)
	if err == nil {
		c.mu.Lock()
		c.commits++
		c.mu.Unlock()
	}
	return err
}

func (c *countingStore) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits
}

// TestCommitsPerTransferHeld counts the commits of a transfer without a
// report on the exec engine, whose starts are two-phase: one more than
// with an engine that cannot hold a process (the target's admission), 4
// from Create until the target is ready and the transfer completed.
func TestCommitsPerTransferHeld(t *testing.T) {
	cs := &countingStore{Store: memstore.New()}
	co := newNode(t, cs, newAgentEngine(t, false, nil), session.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws", Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: "agent", Model: "small"}}); err != nil {
		t.Fatal(err)
	}
	src, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Fix the parser."})
	if err != nil {
		t.Fatal(err)
	}
	before := cs.count()
	h, err := co.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: src.ID,
		Target: baton.EngineConfig{Engine: "agent", Model: "large"}})
	if err != nil {
		t.Fatal(err)
	}
	if h, err = co.Wait(ctx, "ws", h.ID); err != nil || h.State != store.StateCompleted {
		t.Fatalf("Wait = %s (%s), %v; want completed", h.State, h.Error, err)
	}
	// Wait sees the completion once it is durable, which can be before
	// the Update that committed it returned (and was counted).
	const want = 4
	got := 0
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if got = cs.count() - before; got >= want || time.Now().After(deadline) {
			break
		}
	}
	if got != want {
		t.Errorf("%d commits per transfer, want %d", got, want)
	}
	var live []store.Launch
	if err := cs.View(ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches("ws"); return err }); err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].Session != h.TargetSession || !live[0].Admitted {
		t.Errorf("live launches %+v; want the target's, admitted", live)
	}
}
