package handoff_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// countingStore counts the Updates that commit (return nil): each is one
// durable commit on a store that syncs. It forwards store.Notifier (both
// backends are one); countingExclusive adds Incarnation.
type countingStore struct {
	store.Store
	commits atomic.Int64
}

func (c *countingStore) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	return c.Store.(store.Notifier).Subscribe(ws)
}

type countingExclusive struct{ *countingStore }

func (c countingExclusive) Incarnation() string { return c.Store.(exclusive).Incarnation() }

// exclusive is the capability of a store one process holds alone (see
// package store's doc).
type exclusive interface{ Incarnation() string }

// counting wraps st, keeping its capabilities.
func counting(st store.Store) (store.Store, *countingStore) {
	cs := &countingStore{Store: st}
	if _, ok := st.(exclusive); ok {
		return countingExclusive{cs}, cs
	}
	return cs, cs
}

func (c *countingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := c.Store.Update(ctx, fn)
	if err == nil {
		c.commits.Add(1)
	}
	return err
}

// TestCommitsPerTransfer counts every durable commit from Create until the
// transfer is completed and nothing it started is left to record (the
// launch records of the turns it ended closed): 3 without a report, 5 with
// one, on both backends. The figures are what the package doc explains.
func TestCommitsPerTransfer(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memstore", func(t *testing.T) store.Store { return memstore.New() }},
		{"badgerstore", func(t *testing.T) store.Store {
			st, err := badgerstore.Open(t.TempDir(), badgerstore.Options{Small: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		}},
	}
	for _, be := range backends {
		for _, tt := range []struct {
			summary bool
			want    int64
		}{{false, 3}, {true, 5}} {
			t.Run(fmt.Sprintf("%s/summary=%v", be.name, tt.summary), func(t *testing.T) {
				for i := range 5 {
					if got := transferCommits(t, be.open(t), tt.summary, tt.want); got != tt.want {
						t.Fatalf("run %d: %d commits per transfer, want %d", i, got, tt.want)
					}
				}
			})
		}
	}
}

// transferCommits runs one transfer on st and returns its commits.
func transferCommits(t *testing.T, st store.Store, summary bool, want int64) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wrapped, cs := counting(st)
	var co *handoff.Coordinator
	eng := enginetest.New(enginetest.Options{
		ScriptFor: func(req engine.StartRequest) (enginetest.Script, bool) {
			if req.Turn == transcript.ReportOnly {
				return enginetest.Script{Report: "# Report\ncounted", ReportToken: enginetest.RightToken}, true
			}
			return enginetest.Script{}, true
		},
		Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
			return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
		},
	})
	t.Cleanup(eng.Close)
	co, err := handoff.NewOn(wrapped, engine.Registry{"demo": eng}, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	svc := co.Sessions()
	const ws = baton.WorkspaceID("ws-count")
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Mission: "count", Config: baton.EngineConfig{Engine: "demo", Model: "a"}}); err != nil {
		t.Fatal(err)
	}
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	before := cs.commits.Load()
	h, err := co.Create(ctx, handoff.Request{Workspace: ws, RequestID: "r", SourceSession: src.ID,
		GenerateSummary: summary, Target: baton.EngineConfig{Engine: "demo", Model: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if h, err = co.Wait(ctx, ws, h.ID); err != nil || h.State != store.StateCompleted {
		t.Fatalf("Wait = %s (%q), %v; want completed", h.State, h.Error, err)
	}
	// Whatever the transfer ended is recorded once its launches are
	// closed: wait (bounded) until the target's is the only live one, and
	// until every process but the target has ended.
	wantProcs := 2
	if summary {
		wantProcs = 3
	}
	launches, err := eng.WaitLaunches(ctx, wantProcs)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range launches[:len(launches)-1] {
		select {
		case <-l.Proc.Done():
		case <-ctx.Done():
			t.Fatalf("launch %d never ended", l.N)
		}
	}
	for {
		var live []store.Launch
		if err := st.View(ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err }); err != nil {
			t.Fatal(err)
		}
		if len(live) == 1 && live[0].Session == h.TargetSession {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("live launches %+v, want only the target's", live)
		case <-time.After(time.Millisecond):
		}
	}
	// Wait saw the completion as soon as it was durable, which can be
	// before the Update that committed it has returned (and been counted):
	// give the count a bounded moment to catch up.
	for deadline := time.Now().Add(5 * time.Second); ; {
		n := cs.commits.Load() - before
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(time.Millisecond)
	}
}
