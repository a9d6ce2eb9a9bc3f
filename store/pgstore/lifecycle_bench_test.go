package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// countedStore counts the Updates that commit, forwarding store.Notifier.
type countedStore struct {
	*pgstore.Store
	commits atomic.Int64
}

func (c *countedStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	err := c.Store.Update(ctx, fn)
	if err == nil {
		c.commits.Add(1)
	}
	return err
}

var (
	lifecycleSource = baton.EngineConfig{Engine: "demo", Model: "a"}
	lifecycleTarget = baton.EngineConfig{Engine: "demo", Model: "b"}
)

// lifecycleCoordinator is a Coordinator over st with an instant scripted
// engine whose report-only turns submit a report at once. The
// coordinator's warnings and errors (a driver that gave up) go to the
// benchmark's log.
func lifecycleCoordinator(tb testing.TB, st store.Store) (*handoff.Coordinator, *enginetest.Engine) {
	tb.Helper()
	var co *handoff.Coordinator
	eng := enginetest.New(enginetest.Options{
		ScriptFor: func(req engine.StartRequest) (enginetest.Script, bool) {
			if req.Turn == engine.ReportOnly {
				return enginetest.Script{Report: "# Report\nbenchmark", ReportToken: enginetest.RightToken}, true
			}
			return enginetest.Script{}, true
		},
		Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
			return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
		},
	})
	tb.Cleanup(eng.Close)
	co, err := handoff.New(st, engine.NewRegistry(map[string]engine.Engine{"demo": eng}),
		handoff.WithLogger(zaptest.NewLogger(tb, zaptest.Level(zap.WarnLevel))))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	return co, eng
}

// sourceIn creates workspace ws with a running source session.
func sourceIn(tb testing.TB, ctx context.Context, svc *session.Service, ws baton.WorkspaceID) store.Session {
	tb.Helper()
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Mission: "benchmark", Config: lifecycleSource}); err != nil {
		tb.Fatal(err)
	}
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "benchmark"})
	if err != nil {
		tb.Fatal(err)
	}
	return src
}

// transfer runs one transfer of src's workspace, Create to completed,
// within a minute (a transfer whose driver gave up fails rather than
// waits for ever).
func transfer(ctx context.Context, co *handoff.Coordinator, src store.Session, summary bool) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	h, err := co.Create(ctx, handoff.Request{Workspace: src.Workspace, RequestID: "r", SourceSession: src.ID,
		GenerateSummary: summary, Target: lifecycleTarget})
	if err == nil {
		h, err = co.Wait(ctx, src.Workspace, h.ID)
	}
	if err != nil {
		err = fmt.Errorf("transfer of workspace %s: %w", src.Workspace, err)
	} else if h.State != store.StateCompleted {
		err = fmt.Errorf("handoff %s settled in %s: %s", h.ID, h.State, h.Error)
	}
	return err
}

// BenchmarkPGLifecycle is whole transfers, Create to completed, through
// handoff.Coordinator on PostgreSQL with an instant scripted engine: conc
// goroutines, each transfer in a workspace of its own (made, with its
// running source, before the timer starts). It reports handoffs/s and the
// commits per handoff, counted by a wrapping store from Create until the
// last transfer completed (a transfer's last commit, closing the launch
// records of the turns it ended, may follow its completion: the count of
// the last few may miss it).
//
// The store has the default pool (Options.MaxConns: four connections on
// this machine), as a tool would open it: with a connection per
// concurrent transfer and more, conc=16 is slower, not faster, for the
// serialization failures between workspaces that the package Caveats
// describe.
func BenchmarkPGLifecycle(b *testing.B) {
	for _, summary := range []bool{false, true} {
		for _, conc := range benchConcurrency {
			b.Run(fmt.Sprintf("summary=%v/conc=%d", summary, conc), func(b *testing.B) {
				cs := &countedStore{Store: open(b, "", pgstore.Options{})}
				co, _ := lifecycleCoordinator(b, cs)
				ctx := context.Background()
				srcs := make([]store.Session, b.N)
				for i := range srcs {
					srcs[i] = sourceIn(b, ctx, co.Sessions(), baton.WorkspaceID(fmt.Sprint("ws-", i)))
				}
				before := cs.commits.Load()
				var next atomic.Int64
				var failed atomic.Value
				b.ReportAllocs()
				b.ResetTimer()
				var wg sync.WaitGroup
				for range conc {
					wg.Go(func() {
						for {
							i := next.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							if err := transfer(ctx, co, srcs[i], summary); err != nil {
								failed.CompareAndSwap(nil, err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				if err, ok := failed.Load().(error); ok {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handoffs/s")
				b.ReportMetric(float64(cs.commits.Load()-before)/float64(b.N), "commits/handoff")
			})
		}
	}
}
