package handoff_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// TestOptionConflicts: an option given twice is refused at New
// (baton.ErrInvalid), never silently dropped.
func TestOptionConflicts(t *testing.T) {
	st := memstore.New()
	eng := enginetest.New(enginetest.Options{})
	t.Cleanup(eng.Close)
	reg := engine.Registry{"demo": eng}
	svc, err := session.New(st, reg, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []handoff.Option
	}{
		{"WithTimeouts twice", []handoff.Option{handoff.WithTimeouts(handoff.Timeouts{Lease: time.Second}), handoff.WithTimeouts(handoff.Timeouts{Lease: time.Minute})}},
		{"WithBriefing twice", []handoff.Option{handoff.WithBriefing(handoff.Briefing{}), handoff.WithBriefing(handoff.Briefing{HistoryTool: "h"})}},
	} {
		if co, err := handoff.New(svc, reg, tc.opts...); !errors.Is(err, baton.ErrInvalid) {
			t.Errorf("%s: New = %v, %v; want ErrInvalid", tc.name, co, err)
		}
	}
	// The service's options are the Coordinator's.
	clk := clock.NewFake(time.Unix(0, 0))
	shared, err := session.New(st, reg, session.Options{Clock: clk, InstanceID: "node-1"})
	if err != nil {
		t.Fatal(err)
	}
	co, err := handoff.New(shared, reg, handoff.WithTimeouts(handoff.Timeouts{Ready: time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = co.Shutdown(context.Background()) }()
	if handoff.InstanceID(co) != "node-1" {
		t.Errorf("InstanceID = %q, want the service's node-1", handoff.InstanceID(co))
	}
	if co.Sessions() != shared {
		t.Error("Sessions is not the service given to New")
	}
}

// TestShutdownClosesTheService: after Shutdown the Coordinator and the
// service it was given both answer session.ErrClosed.
func TestShutdownClosesTheService(t *testing.T) {
	ctx := context.Background()
	eng := enginetest.New(enginetest.Options{})
	t.Cleanup(eng.Close)
	reg := engine.Registry{"demo": eng}
	co, err := handoff.NewOn(memstore.New(), reg, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := co.Sessions()
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Mission: "m", Config: baton.EngineConfig{Engine: "demo"}}); err != nil {
		t.Fatal(err)
	}
	if err := co.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := co.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "r"}); !errors.Is(err, session.ErrClosed) {
		t.Errorf("Create after Shutdown = %v; want session.ErrClosed", err)
	}
	if _, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "p"}); !errors.Is(err, session.ErrClosed) {
		t.Errorf("the service's Start after Shutdown = %v; want session.ErrClosed", err)
	}
}
