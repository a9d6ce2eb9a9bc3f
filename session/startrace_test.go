package session_test

import (
	"testing"

	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// A Start refused because a process already runs must not touch the row of
// the session that runs (it used to record "start failed" on it).
func TestRefusedStartKeepsTheRunningRow(t *testing.T) {
	f := newFixture(t)
	s := f.start(session.TurnRequest{Prompt: "one"})
	for _, req := range []session.TurnRequest{{Prompt: "two"}, {Prompt: "two", Session: s.ID}} {
		req.Workspace = f.ws
		_, err := f.svc.Start(f.ctx, req)
		mustIs(t, err, session.ErrSessionRunning)
	}
	if got := f.session(s.ID); got.Status != store.SessionRunning || got.EndReason != "" {
		t.Fatalf("running session's row after a refused start = %+v", got)
	}
}

// The end of a session's previous run, recorded late by its watcher, must
// land before the session's next run starts, never on it (it used to mark
// the new run ended).
func TestLateExitDoesNotEndTheNextRun(t *testing.T) {
	f := newFixture(t)
	g := newGateStore(f.st)
	f.svc = f.newService(g)
	s := f.start(session.TurnRequest{Prompt: "one"})
	gt := g.arm()
	f.launches()[0].Proc.Finish(0, nil) // the first run ends on its own
	<-gt.reached                        // its watcher is about to record that
	type result struct {
		s   store.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		again, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "two"})
		done <- result{again, err}
	}()
	close(gt.release)
	r := <-done
	<-gt.done
	if r.err != nil || r.s.ID != s.ID {
		t.Fatalf("second start = %+v, %v; want a resume of %s", r.s, r.err, s.ID)
	}
	if got := f.session(s.ID); got.Status != store.SessionRunning || f.eng.Running(f.ws) != 1 {
		t.Fatalf("row = %+v with %d process running; want running", got, f.eng.Running(f.ws))
	}
}
