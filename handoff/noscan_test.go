package handoff_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// scanStore counts the ListSessions calls made through it; it forwards
// store.Notifier.
type scanStore struct {
	store.Store
	scans atomic.Int64
}

type scanTx struct {
	store.Tx
	c *scanStore
}

func (t scanTx) ListSessions(ws baton.WorkspaceID) ([]store.Session, error) {
	t.c.scans.Add(1)
	return t.Tx.ListSessions(ws)
}

func (c *scanStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.Update(ctx, func(tx store.Tx) error { return fn(scanTx{tx, c}) })
}

func (c *scanStore) View(ctx context.Context, fn func(store.Tx) error) error {
	return c.Store.View(ctx, func(tx store.Tx) error { return fn(scanTx{tx, c}) })
}

func (c *scanStore) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	return c.Store.(store.Notifier).Subscribe(ws)
}

// TestTransfersDoNotScanSessions: a transfer that completes, and one whose
// target fails and that is cancelled (its target rolled back, its source
// restored), read no workspace's sessions in full: their activations,
// ends and rollbacks find the current session from what the workspace
// keeps.
func TestTransfersDoNotScanSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := &scanStore{Store: memstore.New()}
	eng := enginetest.New(enginetest.Options{
		ScriptFor: func(req engine.StartRequest) (enginetest.Script, bool) {
			if req.Config.Model == "broken" {
				return enginetest.Script{Ready: enginetest.ExitBeforeReady, ExitCode: 1}, true
			}
			return enginetest.Script{}, true
		},
	})
	t.Cleanup(eng.Close)
	co, err := handoff.NewOn(st, engine.Registry{"demo": eng}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	svc := co.Sessions()
	const ws = baton.WorkspaceID("ws-scan")
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Mission: "scan", Config: baton.EngineConfig{Engine: "demo", Model: "a"}}); err != nil {
		t.Fatal(err)
	}
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	transfer := func(req string, model string, want store.HandoffState) store.Handoff {
		t.Helper()
		cur, err := svc.Current(ctx, ws)
		if err != nil {
			t.Fatal(err)
		}
		h, err := co.Create(ctx, handoff.Request{Workspace: ws, RequestID: req, SourceSession: cur.ID,
			Target: baton.EngineConfig{Engine: "demo", Model: model}})
		if err != nil {
			t.Fatal(err)
		}
		if h, err = co.Wait(ctx, ws, h.ID); err != nil || h.State != want {
			t.Fatalf("Wait(%s) = %s (%q), %v; want %s", req, h.State, h.Error, err, want)
		}
		return h
	}
	done := transfer("r-1", "b", store.StateCompleted)
	failed := transfer("r-2", "broken", store.StateFailed)
	if _, err := co.Decide(ctx, ws, failed.ID, handoff.Cancel); err != nil {
		t.Fatal(err)
	}
	if n := st.scans.Load(); n != 0 {
		t.Errorf("%d ListSessions calls during the transfers; want none", n)
	}
	cur, err := svc.Current(ctx, ws)
	if err != nil || cur.ID != done.TargetSession || cur.ID == src.ID {
		t.Errorf("current after the cancelled transfer = %s, %v; want the first transfer's target %s", cur.ID, err, done.TargetSession)
	}
}
