package session_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
)

// TestLaunchesCarryTheReadyTimeout: every launch the Service makes tells
// its engine how long it may take to be ready: the Service's
// Options.ReadyTimeout, engine.DefaultReadyTimeout without it, and a request's
// own bound when it sets one.
func TestLaunchesCarryTheReadyTimeout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ready time.Duration
		want  time.Duration
	}{
		{"default", 0, engine.DefaultReadyTimeout},
		{"the service's", 7 * time.Minute, 7 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			svc, err := session.New(f.st, f.eng, session.Options{Clock: f.clk, ReadyTimeout: tc.ready})
			if err != nil {
				t.Fatal(err)
			}
			f.svc = svc
			t.Cleanup(func() { _ = svc.Close(f.ctx) })
			s := f.start(session.TurnRequest{Prompt: "hello"})
			f.stop(s.ID)
			p, err := session.Supervise(svc).Launch(f.ctx, workspace.LaunchRequest{StartRequest: engine.StartRequest{
				Workspace: f.ws, Session: s.ID, Prompt: "own bound", ReadyTimeout: 3 * time.Second, LaunchID: workspace.NewLaunchID()}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Stop(f.ctx, f.ws); err != nil {
				t.Fatal(err)
			}
			<-p.Done()
			ls := f.eng.Launches()
			if len(ls) != 2 {
				t.Fatalf("%d launches; want 2", len(ls))
			}
			if got := ls[0].Req.ReadyTimeout; got != tc.want {
				t.Errorf("a start's ReadyTimeout = %s; want %s", got, tc.want)
			}
			if got := ls[1].Req.ReadyTimeout; got != 3*time.Second {
				t.Errorf("a launch with its own ReadyTimeout got %s; want 3s", got)
			}
		})
	}
}

// hangingReaper is an engine whose reaps never confirm: they wait for
// their context.
type hangingReaper struct{ *enginetest.Engine }

func (hangingReaper) ReapLaunch(ctx context.Context, _ baton.LaunchID) (engine.StopOutcome, error) {
	<-ctx.Done()
	return engine.Timeout, ctx.Err()
}

// TestReapWithinTheStopTimeout: a reap is a stop, bounded by the stop
// timeout: Reconcile does not wait forever on an engine whose reap never
// answers, and leaves the launch unconfirmed (its workspace held).
func TestReapWithinTheStopTimeout(t *testing.T) {
	f := newFixture(t)
	r := hangingReaper{f.eng}
	first, err := session.New(f.st, r, session.Options{Clock: f.clk, InstanceID: "host-a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hello"}); err != nil {
		t.Fatal(err)
	}
	// host-a dies; host-b reconciles.
	next, err := session.New(f.st, r, session.Options{Clock: f.clk, InstanceID: "host-b", StopTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = next.Close(context.Background()) })
	armed := f.clk.WaitTimers(f.clk.PendingBy(f.clk.Now().Add(1000*time.Hour)) + 1)
	done := make(chan session.Reconciled, 1)
	go func() {
		rec, err := session.Reconcile(f.ctx, next)
		if err != nil {
			t.Error(err)
		}
		done <- rec
	}()
	<-armed
	f.clk.Advance(time.Minute)
	rec := <-done
	if len(rec.Unconfirmed) != 1 || len(rec.Gone) != 0 || rec.Unconfirmed[0].Outcome != engine.Timeout ||
		!strings.Contains(rec.Unconfirmed[0].Err.Error(), "within 1m0s") {
		t.Fatalf("Reconcile = %+v; want the launch unconfirmed after the stop timeout", rec)
	}
	for _, l := range f.eng.Launches() {
		if l.Proc != nil && l.Proc.Running() {
			l.Proc.Finish(0, nil)
		}
	}
	_ = first.Close(context.Background())
}
