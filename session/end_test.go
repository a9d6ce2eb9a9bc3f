package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// TestKeepRecordLeavesTheLaunchToItsCaller: the record of a KeepRecord
// launch whose process ended stays open for its caller, who closes it in
// a transaction of its own (ExitEnd), or alone (Finish(false)); when the
// transfer settles another way, CloseUnspawned closes it with the exit's
// reason.
func TestKeepRecordLeavesTheLaunchToItsCaller(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close func(f *fixture, id baton.LaunchID, exit engine.ExitStatus)
	}{
		{"ExitEnd recorded", func(f *fixture, id baton.LaunchID, exit engine.ExitStatus) {
			end := session.Supervise(f.svc).ExitEnd(id, exit)
			f.update(func(tx store.Tx) error { return end.Record(tx) })
			end.Finish(true)
		}},
		{"ExitEnd alone", func(f *fixture, id baton.LaunchID, exit engine.ExitStatus) {
			session.Supervise(f.svc).ExitEnd(id, exit).Finish(false)
		}},
		{"CloseUnspawned", func(f *fixture, id baton.LaunchID, exit engine.ExitStatus) {
			f.update(func(tx store.Tx) error { return session.Supervise(f.svc).CloseUnspawned(tx, f.ws, "h-1") })
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *enginetest.Options) { o.Default = enginetest.Script{Ready: enginetest.ExitBeforeReady} })
			id := workspace.NewLaunchID()
			f.update(func(tx store.Tx) error {
				return workspace.RecordLaunch(tx, store.Launch{ID: id, Workspace: f.ws, Session: "s-1", Handoff: "h-1", Attempt: 1, Holder: session.Supervise(f.svc).InstanceID()})
			})
			req := launchReq("1")
			req.LaunchID, req.KeepRecord = id, true
			p, err := session.Supervise(f.svc).Launch(f.ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			<-p.Done()
			// A second launch in the workspace waits until the first one's
			// watcher is done with it.
			next := launchReq("1")
			next.Session = "s-2"
			if _, err := session.Supervise(f.svc).Launch(f.ctx, next); err != nil {
				t.Fatal(err)
			}
			if l := f.launch(id); l.Gone {
				t.Fatalf("after the exit the record is gone %t (%s), want live: its caller closes it", l.Gone, l.EndReason)
			}
			tt.close(f, id, p.Exit())
			if l := f.launch(id); !l.Gone || l.EndReason != "exited" {
				t.Fatalf("record gone %t (%q), want gone (exited)", l.Gone, l.EndReason)
			}
		})
	}
}

func (f *fixture) launch(id baton.LaunchID) store.Launch {
	f.t.Helper()
	var l store.Launch
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { l, err = tx.GetLaunch(id); return err }); err != nil {
		f.t.Fatal(err)
	}
	return l
}

// TestHaltDeferredLeavesTheEndToItsCaller: HaltDeferred stops the process
// and commits nothing; the workspace's slot stays taken until the caller
// has recorded the end (Record, then Finish).
func TestHaltDeferredLeavesTheEndToItsCaller(t *testing.T) {
	f := newFixture(t)
	src := f.start(session.TurnRequest{Workspace: f.ws, Prompt: "hello"})
	out, end, err := session.Supervise(f.svc).HaltDeferred(f.ctx, f.ws)
	if err != nil || out != engine.Stopped || end == nil {
		t.Fatalf("HaltDeferred = %v, %v, %v; want stopped with an end", out, end, err)
	}
	if s := f.session(src.ID); s.Status != store.SessionRunning {
		t.Fatalf("source %s before the end is recorded, want still running on record", s.Status)
	}
	cancelled, cancel := context.WithCancel(f.ctx)
	cancel()
	req := launchReq("1")
	if _, err := session.Supervise(f.svc).Launch(cancelled, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("a launch before the end is recorded: %v, want it to wait (context.Canceled)", err)
	}
	f.update(func(tx store.Tx) error { return end.Record(tx) })
	end.Finish(true)
	if s := f.session(src.ID); s.Status != store.SessionEnded || s.EndReason != "stopped" {
		t.Fatalf("source %s (%q), want ended (stopped)", s.Status, s.EndReason)
	}
	if _, err := session.Supervise(f.svc).Launch(f.ctx, req); err != nil {
		t.Fatalf("a launch once the end is recorded: %v", err)
	}
}
