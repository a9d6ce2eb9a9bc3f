package pgstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
	"github.com/batonhq/baton/transcript"
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
			if req.Turn == transcript.ReportOnly {
				return enginetest.Script{Report: "# Report\nbenchmark", ReportToken: enginetest.RightToken}, true
			}
			return enginetest.Script{}, true
		},
		Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
			return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
		},
	})
	tb.Cleanup(eng.Close)
	reg := engine.Registry{"demo": eng}
	svc, err := session.New(st, reg, session.Options{Logger: zaptest.NewLogger(tb, zaptest.Level(zap.WarnLevel))})
	if err != nil {
		tb.Fatal(err)
	}
	co, err = handoff.New(svc, reg)
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
// running source, before the timer starts), on a Store whose pool has a
// connection per concurrent transfer (at least DefaultMaxConns); with
// nodes=2, two Stores with pools of their own, each with a Coordinator
// and conc goroutines, standing in for two processes (compare it with
// one Store at twice the concurrency: conc=32). It reports
// handoffs/s; the commits per handoff, counted by a wrapping store from
// Create until the last transfer completed (a transfer's last commit,
// closing the launch records of the turns it ended, may follow its
// completion: the count of the last few may miss it); the conflict
// retries per handoff (the Stores' debug log); and the CPU time per
// handoff of this process (the coordinators, the engine and the
// benchmark) and of the server (its backends, for a server on this
// machine).
func BenchmarkPGLifecycle(b *testing.B) {
	for _, summary := range []bool{false, true} {
		for _, c := range []struct{ nodes, conc int }{{1, 1}, {1, 16}, {1, 32}, {1, 64}, {2, 16}} {
			name := fmt.Sprintf("summary=%v/conc=%d", summary, c.conc)
			if c.nodes > 1 {
				name = fmt.Sprintf("summary=%v/nodes=%d/conc=%d", summary, c.nodes, c.conc)
			}
			b.Run(name, func(b *testing.B) { lifecycle(b, summary, c.nodes, c.conc) })
		}
	}
}

// lifecycleNode is one Store and its Coordinator, counting its commits
// and retries.
type lifecycleNode struct {
	cs   *countedStore
	co   *handoff.Coordinator
	logs *observer.ObservedLogs
}

func newLifecycleNode(b testing.TB, schema string, conc int) *lifecycleNode {
	core, logs := observer.New(zapcore.DebugLevel)
	n := &lifecycleNode{logs: logs}
	n.cs = &countedStore{Store: open(b, schema, pgstore.Options{MaxConns: int32(max(conc, pgstore.DefaultMaxConns)), Logger: zap.New(core)})}
	n.co, _ = lifecycleCoordinator(b, n.cs)
	return n
}

func (n *lifecycleNode) retries() int {
	return n.logs.FilterMessage("pgstore: conflict, retrying").Len()
}

func lifecycle(b *testing.B, summary bool, nodes, conc int) {
	schema := freshSchema(b)
	ns := make([]*lifecycleNode, nodes)
	for i := range ns {
		ns[i] = newLifecycleNode(b, schema, conc)
	}
	ctx := context.Background()
	srcs := make([][]store.Session, nodes)
	for i := range b.N {
		n := i % nodes
		srcs[n] = append(srcs[n], sourceIn(b, ctx, ns[n].co.Sessions(), baton.WorkspaceID(fmt.Sprint("ws-", i))))
	}
	meter := newCPUMeter(b)
	var commits, retries int64
	for _, n := range ns {
		commits -= n.cs.commits.Load()
		retries -= int64(n.retries())
	}
	self := meter.self()
	server, serverOK := meter.server()
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for k, n := range ns {
		var next atomic.Int64
		for range conc {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= int64(len(srcs[k])) {
						return
					}
					if err := transfer(ctx, n.co, srcs[k][i], summary); err != nil {
						failed.CompareAndSwap(nil, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	b.StopTimer()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	self = meter.self() - self
	server2, _ := meter.server()
	for _, n := range ns {
		commits += n.cs.commits.Load()
		retries += int64(n.retries())
	}
	per := func(v float64) float64 { return v / float64(b.N) }
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handoffs/s")
	b.ReportMetric(per(float64(commits)), "commits/handoff")
	b.ReportMetric(per(float64(retries)), "retries/handoff")
	b.ReportMetric(per(us(self)), "cpu-us/handoff")
	if serverOK {
		b.ReportMetric(per(us(server2-server)), "server-cpu-us/handoff")
	}
}

// BenchmarkPGScaling measures how concurrent transfers scale on one
// Store (the default pool): each iteration runs a phase of transfers one
// at a time, then a phase of sixteen at once (distinct workspaces, made
// before each phase with the timer stopped), and the benchmark reports
// the median throughput of each kind of phase and their ratio,
// conc16/conc1. Alternating short phases within one run, both kinds see
// the same machine: the WAL flush of a VM, and the load of its
// neighbours, swing too widely between runs for two separate runs to
// give a ratio. Run it with a fixed count of phase pairs:
//
//	go test ./store/pgstore -run '^$' -bench BenchmarkPGScaling -benchtime 10x
func BenchmarkPGScaling(b *testing.B) {
	const serial, wide, each = 8, 16, 4 // transfers: serial one at a time; wide goroutines of each
	p := newPhases(b, 1, 0)             // the default pool
	var one, sixteen []float64
	for b.Loop() {
		one = append(one, p.run(b, p.nodes, 1, serial))
		sixteen = append(sixteen, p.run(b, p.nodes, wide, each))
	}
	m1, m16 := median(one), median(sixteen)
	b.ReportMetric(m1, "conc1-handoffs/s")
	b.ReportMetric(m16, "conc16-handoffs/s")
	b.ReportMetric(m16/m1, "conc16/conc1")
	b.ReportMetric(p.retries(), "retries/handoff")
}

// BenchmarkPGNodes measures whether two nodes carry at least as much as
// one: each iteration runs three phases on one server, one Store with
// sixteen concurrent transfers, one Store with thirty-two, and two Stores
// (separate pools, standing in for two processes) with sixteen each, and
// the benchmark reports each kind's median throughput and the ratios of
// two nodes to one at the same per-node and at the same total
// concurrency, nodes2/conc16 and nodes2/conc32. As in BenchmarkPGScaling,
// the phases alternate within one run so that all see the same machine:
//
//	go test ./store/pgstore -run '^$' -bench BenchmarkPGNodes -benchtime 10x
func BenchmarkPGNodes(b *testing.B) {
	const wide, each = 16, 4 // each node's goroutines, and the transfers of each
	p := newPhases(b, 2, 2*wide)
	one := p.nodes[:1]
	var c16, c32, two []float64
	for b.Loop() {
		c16 = append(c16, p.run(b, one, wide, each))
		c32 = append(c32, p.run(b, one, 2*wide, each))
		two = append(two, p.run(b, p.nodes, wide, each))
	}
	m16, m32, m2 := median(c16), median(c32), median(two)
	b.ReportMetric(m16, "conc16-handoffs/s")
	b.ReportMetric(m32, "conc32-handoffs/s")
	b.ReportMetric(m2, "nodes2-handoffs/s")
	b.ReportMetric(m2/m16, "nodes2/conc16")
	b.ReportMetric(m2/m32, "nodes2/conc32")
	b.ReportMetric(p.retries(), "retries/handoff")
}

// phases runs timed phases of transfers on nodes sharing one schema, each
// transfer in a workspace of its own made with the timer stopped.
type phases struct {
	nodes []*lifecycleNode
	made  int
}

// newPhases opens k nodes (Stores with pools of their own, sized for conc
// concurrent transfers: see newLifecycleNode) on a fresh schema.
func newPhases(b *testing.B, k, conc int) *phases {
	schema := freshSchema(b)
	p := &phases{}
	for range k {
		p.nodes = append(p.nodes, newLifecycleNode(b, schema, conc))
	}
	return p
}

// run makes wide*each sources on every node of ns, then runs wide
// goroutines on each node, each transferring each of them one after
// another, and returns the phase's handoffs per second.
func (p *phases) run(b *testing.B, ns []*lifecycleNode, wide, each int) float64 {
	ctx := context.Background()
	b.StopTimer()
	srcs := make([][]store.Session, len(ns))
	for k, n := range ns {
		for range wide * each {
			srcs[k] = append(srcs[k], sourceIn(b, ctx, n.co.Sessions(), baton.WorkspaceID(fmt.Sprint("ws-", p.made))))
			p.made++
		}
	}
	b.StartTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Value
	for k, n := range ns {
		for w := range wide {
			wg.Go(func() {
				for _, src := range srcs[k][w*each : (w+1)*each] {
					if err := transfer(ctx, n.co, src, false); err != nil {
						failed.CompareAndSwap(nil, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return float64(len(ns)*wide*each) / time.Since(start).Seconds()
}

// retries returns the conflict retries per transfer over every phase run.
func (p *phases) retries() float64 {
	r := 0
	for _, n := range p.nodes {
		r += n.retries()
	}
	return float64(r) / float64(p.made)
}

// median returns the median of v (which it sorts).
func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
