package session_test

import (
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// launchReq is a plain launch request in ws.
func launchReq(ws string) workspace.LaunchRequest {
	return workspace.LaunchRequest{StartRequest: engine.StartRequest{Workspace: baton.WorkspaceID("ws-" + ws), Session: baton.SessionID("s-" + ws), Config: cfgA, Mode: engine.Fresh, Turn: transcript.Normal, Prompt: "p"}}
}

func TestLaunchOneProcessPerWorkspace(t *testing.T) {
	f := newFixture(t)
	p, err := session.Supervise(f.svc).Launch(f.ctx, launchReq("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Supervise(f.svc).Launch(f.ctx, launchReq("1")); !errors.Is(err, session.ErrSessionRunning) {
		t.Fatalf("second launch in ws-1: %v, want ErrSessionRunning", err)
	}
	if _, err := session.Supervise(f.svc).Launch(f.ctx, launchReq("2")); err != nil {
		t.Fatalf("a launch in another workspace: %v", err)
	}
	if id, ok := f.svc.Running("ws-1"); !ok || id != "s-1" {
		t.Fatalf("Running = %q, %v", id, ok)
	}
	out, err := session.Supervise(f.svc).Halt(f.ctx, "ws-1")
	if err != nil || out != engine.Stopped {
		t.Fatalf("Halt = %v, %v; want stopped", out, err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("a confirmed Halt left the process running")
	}
	if _, ok := f.svc.Running("ws-1"); ok {
		t.Fatal("Running after Halt")
	}
	if out, err := session.Supervise(f.svc).Halt(f.ctx, "ws-1"); err != nil || out != engine.NotRunning {
		t.Fatalf("second Halt = %v, %v; want not-running", out, err)
	}
	if _, err := session.Supervise(f.svc).Launch(f.ctx, launchReq("1")); err != nil {
		t.Fatalf("launch after Halt: %v", err)
	}
	if n := len(f.launches()); n != 3 {
		t.Fatalf("engine calls = %d, want 3", n)
	}
	if m := f.eng.MaxRunning("ws-1"); m != 1 {
		t.Fatalf("max running in ws-1 = %d", m)
	}
}

func TestLaunchPrecheckRefusal(t *testing.T) {
	f := newFixture(t)
	why := errors.New("attempt moved on")
	req := launchReq("1")
	called := false
	req.Precheck = func(tx store.Tx) error {
		called = true
		if _, err := tx.GetWorkspace("ws-1"); err != nil {
			return err
		}
		return why
	}
	_, err := session.Supervise(f.svc).Launch(f.ctx, req)
	mustIs(t, err, session.ErrLaunchRefused)
	if !called {
		t.Fatal("Precheck not called")
	}
	if n := len(f.launches()); n != 0 {
		t.Fatalf("a refused launch reached the engine (%d calls)", n)
	}
	req.Precheck = func(store.Tx) error { return nil }
	if _, err := session.Supervise(f.svc).Launch(f.ctx, req); err != nil {
		t.Fatalf("launch with a passing Precheck: %v", err)
	}
}

func TestLaunchChecksReservation(t *testing.T) {
	f := newFixture(t)
	o := f.reserve("h1")
	req := launchReq("1")
	mustIs(t, func() error { _, err := session.Supervise(f.svc).Launch(f.ctx, req); return err }(), session.ErrWorkspaceBusy)
	req.Owner, req.Epoch = o.Token, o.Epoch-1
	mustIs(t, func() error { _, err := session.Supervise(f.svc).Launch(f.ctx, req); return err }(), workspace.ErrStaleEpoch)
	if n := len(f.launches()); n != 0 {
		t.Fatalf("refused launches reached the engine (%d calls)", n)
	}
	req.Epoch = o.Epoch
	if _, err := session.Supervise(f.svc).Launch(f.ctx, req); err != nil {
		t.Fatalf("owner launch: %v", err)
	}
}

func TestLaunchOnExitAndClose(t *testing.T) {
	f := newFixture(t)
	exited := make(chan engine.ExitStatus, 1)
	req := launchReq("1")
	req.OnExit = func(st engine.ExitStatus) { exited <- st }
	if _, err := session.Supervise(f.svc).Launch(f.ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case st := <-exited:
		if !st.Stopped {
			t.Fatalf("exit = %+v, want stopped by Close", st)
		}
	default:
		t.Fatal("OnExit not called by the time Close returned")
	}
	mustIs(t, func() error { _, err := session.Supervise(f.svc).Launch(f.ctx, launchReq("1")); return err }(), session.ErrClosed)
}
