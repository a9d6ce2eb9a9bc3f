package session_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// reaper wraps an engine with a scripted engine.Reaper.
type reaper struct {
	engine.Engine
	mu     sync.Mutex
	out    engine.StopOutcome
	reaped []baton.LaunchID
}

func (r *reaper) ReapLaunch(_ context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reaped = append(r.reaped, id)
	return r.out, nil
}

func (f *fixture) liveLaunches() []store.Launch {
	f.t.Helper()
	var live []store.Launch
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(f.ws); return err }); err != nil {
		f.t.Fatal(err)
	}
	return live
}

// Every launch is on record before it is spawned, and closed once its
// process is confirmed gone; after a crash, a launch that cannot be
// confirmed gone keeps its session running and refuses ordinary starts
// until a reap confirms it.
func TestLaunchRecordsAndReap(t *testing.T) {
	f := newFixture(t)
	r := &reaper{Engine: f.eng, out: engine.Timeout}
	svc, err := session.New(f.st, r, session.Options{Clock: f.clk, InstanceID: "host-a"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	live := f.liveLaunches()
	if len(live) != 1 || live[0].Session != s.ID || !strings.HasPrefix(live[0].Holder, "host-a/") || live[0].Host == "" {
		t.Fatalf("live launches = %+v, want the session's, held by host-a", live)
	}
	if got := f.launches()[0].Req.LaunchID; got != live[0].ID {
		t.Fatalf("the engine was given launch %q, the record is %q", got, live[0].ID)
	}

	// host-a crashes: its process runs on, unknown to the next Service.
	next, err := session.New(f.st, r, session.Options{Clock: f.clk, InstanceID: "host-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Close(context.Background()) })
	rec, err := session.Reconcile(f.ctx, next)
	if err != nil || rec.EndedSessions != 0 || len(rec.Gone) != 0 || len(rec.Unconfirmed) != 1 {
		t.Fatalf("Reconcile with an unconfirmed reap = %+v, %v; want the row left running and its launch unconfirmed", rec, err)
	}
	if u := rec.Unconfirmed[0]; u.ID != live[0].ID || u.Workspace != f.ws || u.Session != s.ID || u.Outcome.Confirmed() || u.Err == nil {
		t.Fatalf("unconfirmed launch = %+v; want launch %s of workspace %s, session %s, with why", u, live[0].ID, f.ws, s.ID)
	}
	if got := f.session(s.ID); got.Status != store.SessionRunning {
		t.Fatalf("session %+v: want running while its launch may run", got)
	}
	_, err = next.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "again"})
	mustIs(t, err, session.ErrSessionRunning)

	r.mu.Lock()
	r.out = engine.Stopped
	r.mu.Unlock()
	rec, err = session.Reconcile(f.ctx, next)
	if err != nil || rec.EndedSessions != 1 || len(rec.Gone) != 1 || len(rec.Unconfirmed) != 0 {
		t.Fatalf("Reconcile with a confirmed reap = %+v, %v", rec, err)
	}
	if g := rec.Gone[0]; g.ID != live[0].ID || g.Workspace != f.ws || g.Outcome != engine.Stopped || g.Err != nil {
		t.Fatalf("reaped launch = %+v; want launch %s of workspace %s, killed", g, live[0].ID, f.ws)
	}
	if live := f.liveLaunches(); len(live) != 0 {
		t.Fatalf("live launches after the reap = %+v", live)
	}
	if _, err := next.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "again"}); err != nil {
		t.Fatalf("Start after the reap: %v", err)
	}
	if out, err := next.Stop(f.ctx, f.ws); err != nil || !out.Confirmed() {
		t.Fatalf("Stop = %s, %v", out, err)
	}
	if live := f.liveLaunches(); len(live) != 0 {
		t.Fatalf("a confirmed stop left launches live: %+v", live)
	}
	// Let host-a's abandoned process end so the cleanup finishes.
	for _, l := range f.launches() {
		if l.Proc != nil && l.Proc.Running() {
			l.Proc.Finish(0, nil)
		}
	}
	_ = svc.Close(context.Background())
}

// A reap that confirms a crashed host's launch gone also ends its session's
// row, still marked running: a running row is always the current session,
// so it would stay current after a transfer completed elsewhere.
func TestReapEndsTheRowOfAReapedLaunch(t *testing.T) {
	f := newFixture(t)
	r := &reaper{Engine: f.eng, out: engine.Stopped}
	svc, err := session.New(f.st, r, session.Options{Clock: f.clk, InstanceID: "host-a"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	later := f.insertSession(store.Session{ID: "later", ActivationOrder: 5})
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != s.ID {
		t.Fatalf("before: current %s, want the running row %s", cur.ID, s.ID)
	}
	// host-a crashes; host-b reaps what it left (Reap, not Reconcile: a
	// multi-process host reaps a workspace, it does not end every row).
	next, err := session.New(f.st, r, session.Options{Clock: f.clk, InstanceID: "host-b"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Close(context.Background()) })
	res, err := session.Supervise(next).Reap(f.ctx, f.ws, nil)
	if err != nil || len(res.Gone) != 1 || len(res.Ended) != 1 || res.Ended[0] != s.ID {
		t.Fatalf("Reap = %+v, %v; want the launch gone and its session ended", res, err)
	}
	if got := f.session(s.ID); got.Status != store.SessionEnded || got.EndReason != "interrupted: its process is gone" {
		t.Fatalf("reaped session row = %+v", got)
	}
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != later.ID {
		t.Fatalf("after: current %s, want %s", cur.ID, later.ID)
	}
}
