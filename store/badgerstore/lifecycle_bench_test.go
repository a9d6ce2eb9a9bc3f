package badgerstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/transcript"
)

// The benchmarks of the embedded store under the transfer coordinator.
// Their targets (read from the figures, never asserted by time):
//
//   - BenchmarkBadgerTransition/sync=on <= 1.3x BenchmarkBadgerRawCommit/sync=on/conc=1
//     (interleaved: BenchmarkBadgerTransitionVsRaw);
//   - BenchmarkBadgerLifecycle reports commits/handoff: 3 without a report,
//     5 with one, and handoffs/s (conc=16 against conc=1);
//   - a lifecycle at conc=1 <= 1.3x its commits x a raw commit
//     (interleaved: BenchmarkBadgerLifecycleVsRaw, which also reports the
//     share of the transfer's own commits and the ratio to raw commits
//     as wide as the transfer's, BenchmarkBadgerWideCommit);
//   - BenchmarkBadgerActivate/sessions=10000 <= 2x sessions=10, and the
//     same for BenchmarkBadgerSessionEnd and BenchmarkBadgerRollback;
//   - BenchmarkBadgerReconcile/history=100000 <= 1.2x history=1000.

// countedStore counts the Updates that commit, keeping the store's
// capabilities (store.Notifier, Incarnation). With timed set, it also
// adds up the time the Updates spent outside their function (beginning,
// committing and waiting for the commit to be durable: what a raw commit
// does), in committing.
type countedStore struct {
	*badgerstore.Store
	commits    atomic.Int64
	timed      bool
	committing atomic.Int64 // nanoseconds
}

func (c *countedStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	var err error
	if c.timed {
		err = c.timedUpdate(ctx, fn)
	} else {
		err = c.Store.Update(ctx, fn)
	}
	if err == nil {
		c.commits.Add(1)
	}
	return err
}

// timedUpdate is Update adding the time spent outside fn to committing.
// It is apart so that the untimed Update allocates nothing more.
func (c *countedStore) timedUpdate(ctx context.Context, fn func(store.Tx) error) error {
	start := time.Now()
	var inFn time.Duration
	err := c.Store.Update(ctx, func(tx store.Tx) error {
		t := time.Now()
		defer func() { inFn += time.Since(t) }()
		return fn(tx)
	})
	c.committing.Add(int64(time.Since(start) - inFn))
	return err
}

// benchCoordinator is a Coordinator over st with an instant scripted
// engine whose report-only turns submit a report, or hang when hang is set.
func benchCoordinator(b *testing.B, st store.Store, hang bool) (*handoff.Coordinator, *enginetest.Engine) {
	b.Helper()
	var co *handoff.Coordinator
	eng := enginetest.New(enginetest.Options{
		ScriptFor: func(req engine.StartRequest) (enginetest.Script, bool) {
			switch {
			case req.Turn == transcript.ReportOnly && hang:
				return enginetest.Script{Hang: true}, true
			case req.Turn == transcript.ReportOnly:
				return enginetest.Script{Report: "# Report\nbenchmark", ReportToken: enginetest.RightToken}, true
			}
			return enginetest.Script{}, true
		},
		Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
			return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
		},
	})
	b.Cleanup(eng.Close)
	reg := engine.Registry{"demo": eng}
	svc, err := session.New(st, reg, session.Options{})
	if err != nil {
		b.Fatal(err)
	}
	co, err = handoff.New(svc, reg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	return co, eng
}

var (
	benchSource = baton.EngineConfig{Engine: "demo", Model: "a"}
	benchTarget = baton.EngineConfig{Engine: "demo", Model: "b"}
)

// sourceIn creates workspace ws with a running source session.
func sourceIn(b *testing.B, ctx context.Context, svc *session.Service, ws baton.WorkspaceID) store.Session {
	b.Helper()
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Mission: "benchmark", Config: benchSource}); err != nil {
		b.Fatal(err)
	}
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// BenchmarkBadgerTransition is one coordinator transition on badger: a
// second, different report submitted while the report-only turn runs
// (SubmitReport firing ReportRefused, an internal transition: one Update
// that reads the handoff, checks the token, fires the machine and writes
// the row with the refusal).
func BenchmarkBadgerTransition(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("sync=%s", onOff(sync)), func(b *testing.B) {
			opts := badgerstore.Options{}
			if !sync {
				opts.NoSync = true
			}
			transition := transitionSetup(b, opts)
			b.ReportAllocs()
			b.ResetTimer()
			cpuBefore, cpuOK := processCPU()
			i := 0
			for b.Loop() {
				i++
				if err := transition(i); err != nil {
					b.Fatal(err)
				}
			}
			cpuAfter, _ := processCPU()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "transitions/s")
			if cpuOK {
				b.ReportMetric(float64((cpuAfter-cpuBefore).Microseconds())/float64(b.N), "cpu-us/op")
			}
		})
	}
}

// transitionSetup makes the transfer of BenchmarkBadgerTransition, held
// in its report-only turn, and returns its transition: call it with a
// new i each time.
func transitionSetup(b *testing.B, opts badgerstore.Options) func(i int) error {
	b.Helper()
	st := open(b, b.TempDir(), opts)
	co, eng := benchCoordinator(b, st, true)
	ctx := context.Background()
	src := sourceIn(b, ctx, co.Sessions(), "ws-bench")
	h, err := co.Create(ctx, handoff.Request{Workspace: "ws-bench", RequestID: "r", SourceSession: src.ID, GenerateSummary: true, Target: benchTarget})
	if err != nil {
		b.Fatal(err)
	}
	ls, err := eng.WaitLaunches(ctx, 2)
	if err != nil {
		b.Fatal(err)
	}
	cred := ls[1].Req.Report
	if cred == nil {
		b.Fatal("the second launch is not the report-only turn")
	}
	tok := cred.Token.Reveal()
	if err := co.SubmitReport(ctx, "ws-bench", h.ID, tok, "# Report\nbenchmark"); err != nil {
		b.Fatal(err)
	}
	return func(i int) error {
		// A different report each time: the ReportRefused transition
		// records the refusal (an identical one would change nothing and
		// commit nothing).
		if err := co.SubmitReport(ctx, "ws-bench", h.ID, tok, fmt.Sprint("# Report\nbenchmark ", i)); !errors.Is(err, handoff.ErrReportConflict) {
			return fmt.Errorf("SubmitReport = %v, want ErrReportConflict", err)
		}
		return nil
	}
}

// BenchmarkBadgerTransitionVsRaw alternates a raw badger commit with
// per-commit fsync (BenchmarkBadgerRawCommit/sync=on, on a database of
// its own in the same file system) and a transition
// (BenchmarkBadgerTransition/sync=on), and reports their mean latencies
// and the ratio (target: at most 1.3). Run back to back, the two
// benchmarks see a shared machine's load change between them;
// interleaved, both see the same load.
func BenchmarkBadgerTransitionVsRaw(b *testing.B) {
	transition := transitionSetup(b, badgerstore.Options{})
	db := openRaw(b, true)
	var raw, trans time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		i++
		start := time.Now()
		if err := rawCommit(db, 0, uint64(i)); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := transition(i); err != nil {
			b.Fatal(err)
		}
		raw, trans = raw+mid.Sub(start), trans+time.Since(mid)
	}
	b.ReportMetric(float64(raw.Microseconds())/float64(b.N), "raw-us/op")
	b.ReportMetric(float64(trans.Microseconds())/float64(b.N), "transition-us/op")
	b.ReportMetric(float64(trans)/float64(raw), "transition/raw")
}

func onOff(v bool) string {
	if v {
		return "on"
	}
	return "off"
}

// BenchmarkBadgerLifecycle is whole transfers, Create to completed, on
// badger with sync on and an instant scripted engine: conc goroutines,
// each transfer in a workspace of its own (made, with its running source,
// before the timer starts). It reports handoffs/s and the durable commits
// per handoff, counted by a wrapping store from Create until completed,
// and, to tell fsync waits from work, the group commit sync rounds and the
// CPU time of the process (every thread, the kernel's share included) per
// handoff, and the cores the process kept busy (CPU time over wall time:
// on a shared machine, compare it with what the others leave free).
// Without a report it also runs at conc=64, which tells how far sixteen
// transfers are from what the cores allow.
func BenchmarkBadgerLifecycle(b *testing.B) {
	for _, summary := range []bool{false, true} {
		concs := []int{1, 16}
		if !summary {
			concs = append(concs, 64)
		}
		for _, conc := range concs {
			b.Run(fmt.Sprintf("summary=%v/conc=%d", summary, conc), func(b *testing.B) {
				runLifecycles(b, badgerstore.Options{}, summary, conc)
			})
		}
	}
}

// BenchmarkBadgerLifecycleNoSync is BenchmarkBadgerLifecycle without a
// report, at conc=1, with NoSync: a transfer's CPU and
// in-process latency without the fsyncs, against the figure of
// BenchmarkLifecycle of package handoff on memstore.
func BenchmarkBadgerLifecycleNoSync(b *testing.B) {
	runLifecycles(b, badgerstore.Options{NoSync: true}, false, 1)
}

// runLifecycles runs b.N transfers on a store opened with opts, from conc
// goroutines (see BenchmarkBadgerLifecycle).
func runLifecycles(b *testing.B, opts badgerstore.Options, summary bool, conc int) {
	cs := &countedStore{Store: open(b, b.TempDir(), opts)}
	co, _ := benchCoordinator(b, cs, false)
	ctx := context.Background()
	srcs := make([]store.Session, b.N)
	for i := range srcs {
		srcs[i] = sourceIn(b, ctx, co.Sessions(), baton.WorkspaceID(fmt.Sprint("ws-", i)))
	}
	before, roundsBefore := cs.commits.Load(), badgerstore.SyncRounds(cs.Store)
	cpuBefore, cpuOK := processCPU()
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
				src := srcs[i]
				h, err := co.Create(ctx, handoff.Request{Workspace: src.Workspace, RequestID: "r", SourceSession: src.ID,
					GenerateSummary: summary, Target: benchTarget})
				if err == nil {
					h, err = co.Wait(ctx, src.Workspace, h.ID)
				}
				if err == nil && h.State != store.StateCompleted {
					err = fmt.Errorf("handoff %s settled in %s: %s", h.ID, h.State, h.Error)
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	cpuAfter, _ := processCPU()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handoffs/s")
	b.ReportMetric(float64(cs.commits.Load()-before)/float64(b.N), "commits/handoff")
	b.ReportMetric(float64(badgerstore.SyncRounds(cs.Store)-roundsBefore)/float64(b.N), "syncs/handoff")
	if cpuOK {
		cpu := cpuAfter - cpuBefore
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/handoff")
		b.ReportMetric(cpu.Seconds()/b.Elapsed().Seconds(), "cores")
	}
}

// BenchmarkBadgerLifecycleVsRaw alternates one transfer of
// BenchmarkBadgerLifecycle at conc=1 with as many raw badger commits with
// per-commit fsync as the transfer committed (BenchmarkBadgerRawCommit,
// on a database of its own in the same file system), and reports the mean
// latencies and the ratio of a transfer to its commits' raw cost (target:
// at most 1.3), both measured under the same load.
//
// It splits the transfer's time in two: commit-us/handoff, the time its
// Updates spent outside their functions (beginning, committing, waiting
// for the sync round: the part a raw commit stands for), whose ratio to
// the raw commits is commit/raw; and rest-us/handoff, everything else
// (the coordinator, the session service, the engine and the reads).
// lifecycle/raw is commit/raw plus rest-us over the raw commits' time.
//
// After the raw commits, it makes as many raw commits as wide as a
// transfer's (wideCommit, BenchmarkBadgerWideCommit) and reports
// wide-us/commit and lifecycle/wide: the transfer against what badger
// itself charges, with its own per-commit fsync, for commits that write
// what the transfer's write.
func BenchmarkBadgerLifecycleVsRaw(b *testing.B) {
	for _, summary := range []bool{false, true} {
		b.Run(fmt.Sprintf("summary=%v", summary), func(b *testing.B) {
			cs := &countedStore{Store: open(b, b.TempDir(), badgerstore.Options{}), timed: true}
			co, _ := benchCoordinator(b, cs, false)
			db := openRaw(b, true)
			ctx := context.Background()
			srcs := make([]store.Session, b.N)
			for i := range srcs {
				srcs[i] = sourceIn(b, ctx, co.Sessions(), baton.WorkspaceID(fmt.Sprint("ws-", i)))
			}
			var life, raw, wide time.Duration
			var commits int64
			b.ReportAllocs()
			committing := cs.committing.Load()
			b.ResetTimer()
			for i, src := range srcs {
				before := cs.commits.Load()
				start := time.Now()
				h, err := co.Create(ctx, handoff.Request{Workspace: src.Workspace, RequestID: "r", SourceSession: src.ID,
					GenerateSummary: summary, Target: benchTarget})
				if err == nil {
					h, err = co.Wait(ctx, src.Workspace, h.ID)
				}
				if err == nil && h.State != store.StateCompleted {
					err = fmt.Errorf("handoff %s settled in %s: %s", h.ID, h.State, h.Error)
				}
				if err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				n := cs.commits.Load() - before
				for c := range n {
					if err := rawCommit(db, 0, uint64(i)<<8|uint64(c)); err != nil {
						b.Fatal(err)
					}
				}
				end := time.Now()
				for c := range n {
					if err := wideCommit(db, 0, uint64(i)<<8|uint64(c)); err != nil {
						b.Fatal(err)
					}
				}
				life, raw, wide, commits = life+mid.Sub(start), raw+end.Sub(mid), wide+time.Since(end), commits+n
			}
			b.StopTimer()
			b.ReportMetric(float64(commits)/float64(b.N), "commits/handoff")
			b.ReportMetric(float64(life.Microseconds())/float64(b.N), "lifecycle-us/op")
			b.ReportMetric(float64(raw.Microseconds())/float64(commits), "raw-us/commit")
			b.ReportMetric(float64(life)/float64(raw), "lifecycle/raw")
			b.ReportMetric(float64(wide.Microseconds())/float64(commits), "wide-us/commit")
			b.ReportMetric(float64(life)/float64(wide), "lifecycle/wide")
			committing = cs.committing.Load() - committing
			b.ReportMetric(float64(committing)/1e3/float64(b.N), "commit-us/handoff")
			b.ReportMetric(float64(committing)/float64(raw), "commit/raw")
			b.ReportMetric((float64(life)-float64(committing))/1e3/float64(b.N), "rest-us/handoff")
		})
	}
}

// historyWorkspace opens a badger store (sync on) with workspace ws-bench
// holding n ended sessions activated in turn (orders 1..n), written
// without a ranking as an earlier release left them, and ranks them with
// a Service's Reconcile. It returns the store, the session ids and the
// Service.
func historyWorkspace(b *testing.B, n int) (*badgerstore.Store, []baton.SessionID, *session.Service) {
	b.Helper()
	st := open(b, b.TempDir(), badgerstore.Options{})
	ctx := context.Background()
	ids := make([]baton.SessionID, n)
	err := st.Update(ctx, func(tx store.Tx) error {
		return tx.PutWorkspace(store.Workspace{ID: benchWS, Config: benchSource, CreatedAt: benchNow})
	})
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < n; lo += 500 {
		err := st.Update(ctx, func(tx store.Tx) error {
			for i := lo; i < min(lo+500, n); i++ {
				ids[i] = baton.SessionID(fmt.Sprintf("ses-%06d", i))
				if err := tx.PutSession(store.Session{ID: ids[i], Workspace: benchWS, Config: benchSource, Status: store.SessionEnded,
					NativeID: "native", ActivationOrder: int64(i + 1), StartedAt: benchNow, EndedAt: benchNow, CreatedAt: benchNow}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	eng := enginetest.New(enginetest.Options{})
	b.Cleanup(eng.Close)
	svc, err := session.New(st, eng, session.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = svc.Close(context.Background()) })
	// Linking reads every session; it is not measured.
	if err := workspace.RankAll(ctx, st, time.Now); err != nil {
		b.Fatal(err)
	}
	return st, ids, svc
}

const benchWS = baton.WorkspaceID("ws-bench")

var benchNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// BenchmarkBadgerActivate is one session activation on badger (sync on):
// an Update that gives a session of the workspace the next activation
// order and refreshes the workspace's current session, in a workspace of
// 10 or 10,000 sessions.
func BenchmarkBadgerActivate(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			st, ids, _ := historyWorkspace(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				// Alternate between two sessions, so that every op moves the
				// highest order.
				id := ids[i%2]
				i++
				err := st.Update(ctx, func(tx store.Tx) error {
					_, err := workspace.Activate(tx, id, benchNow)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "activations/s")
		})
	}
}

// runningAgain marks session id running and activates it (a resume), in a
// commit of its own: the set-up of one end or rollback, not measured.
func runningAgain(b *testing.B, st store.Store, id baton.SessionID) {
	b.Helper()
	b.StopTimer()
	defer b.StartTimer()
	err := st.Update(context.Background(), func(tx store.Tx) error {
		s, err := tx.GetSession(id)
		if err != nil {
			return err
		}
		s.Status, s.StartedAt, s.EndedAt, s.EndReason = store.SessionRunning, benchNow, time.Time{}, ""
		if err := tx.PutSession(s); err != nil {
			return err
		}
		_, err = workspace.Activate(tx, id, benchNow)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBadgerSessionEnd is one session end on badger (sync on): the
// current session, running, ends (Service.RecordEnd, the path of every
// process exit), which closes its row and finds the workspace's next
// current session, in a workspace of 10 or 10,000 sessions. Each op's
// resume of the session is set up with the timer stopped.
func BenchmarkBadgerSessionEnd(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			st, ids, svc := historyWorkspace(b, n)
			sup := workspace.Of(svc).(interface {
				RecordEnd(baton.SessionID, baton.LaunchID, engine.ExitStatus)
			})
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				id := ids[i%2]
				i++
				runningAgain(b, st, id)
				sup.RecordEnd(id, "", engine.ExitStatus{Stopped: true})
			}
			b.StopTimer()
			var s store.Session
			if err := st.View(context.Background(), func(tx store.Tx) (err error) { s, err = tx.GetSession(ids[(i-1)%2]); return err }); err != nil {
				b.Fatal(err)
			}
			if s.Status != store.SessionEnded {
				b.Fatalf("after RecordEnd session %s is %s, want ended", s.ID, s.Status)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ends/s")
		})
	}
}

// BenchmarkBadgerRollback is one workspace.Rollback on badger (sync on) of
// the workspace's current session, the head of its ranking (the case
// that must find the next one), in a workspace of 10 or 10,000 sessions.
// Each op's activation of the session is set up with the timer stopped.
func BenchmarkBadgerRollback(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			st, ids, _ := historyWorkspace(b, n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				id := ids[i%2]
				i++
				runningAgain(b, st, id)
				err := st.Update(ctx, func(tx store.Tx) error { return workspace.Rollback(tx, id, "transfer rolled back", benchNow) })
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rollbacks/s")
		})
	}
}

// BenchmarkBadgerReconcile is Reconcile of 1,000 pending transfers left
// by a dead process (their leases written under another incarnation of
// the store), with 1,000 handoffs stored in all (history=1000) or 100,000
// (99,000 settled ones besides). The pending rows are reset before each
// op, with the timer stopped.
func BenchmarkBadgerReconcile(b *testing.B) {
	const pending = 1000
	for _, history := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			st := open(b, b.TempDir(), badgerstore.Options{})
			ctx := context.Background()
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			ws := func(i int) baton.WorkspaceID { return baton.WorkspaceID(fmt.Sprintf("ws-%04d", i)) }
			batch := func(n int, fn func(tx store.Tx, i int) error) {
				b.Helper()
				for lo := 0; lo < n; lo += 500 {
					err := st.Update(ctx, func(tx store.Tx) error {
						for i := lo; i < min(lo+500, n); i++ {
							if err := fn(tx, i); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			batch(pending, func(tx store.Tx, i int) error {
				if err := tx.PutWorkspace(store.Workspace{ID: ws(i), Config: benchSource, CreatedAt: now}); err != nil {
					return err
				}
				err := tx.PutSession(store.Session{ID: baton.SessionID(fmt.Sprintf("src-%04d", i)), Workspace: ws(i),
					Config: benchSource, Status: store.SessionEnded, NativeID: "native", ActivationOrder: 1, StartedAt: now, EndedAt: now, CreatedAt: now})
				return err
			})
			settled := history - pending
			batch(settled, func(tx store.Tx, i int) error {
				return tx.PutHandoff(store.Handoff{ID: baton.HandoffID(fmt.Sprintf("old-%06d", i)), Workspace: ws(i % pending),
					RequestID: fmt.Sprintf("old-%06d", i), State: store.StateCompleted, Attempt: 1, SourceSession: baton.SessionID(fmt.Sprintf("src-%04d", i%pending)),
					SourceConfig: benchSource, TargetConfig: benchTarget, CreatedAt: now, UpdatedAt: now})
			})
			hid := func(i int) baton.HandoffID { return baton.HandoffID(fmt.Sprintf("live-%04d", i)) }
			reset := func(first bool) {
				batch(pending, func(tx store.Tx, i int) error {
					h := store.Handoff{ID: hid(i), Workspace: ws(i), RequestID: "live", State: store.StateStarting, Attempt: 1,
						SourceSession: baton.SessionID(fmt.Sprintf("src-%04d", i)), SourceConfig: benchSource, TargetConfig: benchTarget,
						CreatedAt: now, UpdatedAt: now}
					var err error
					if first {
						err = tx.PutHandoff(h)
					} else {
						err = tx.PutHandoff(h)
					}
					if err != nil {
						return err
					}
					return tx.PutReservation(store.Reservation{Workspace: ws(i), Held: true, Handoff: hid(i), Epoch: 1,
						LeaseHolder: "dead", LeaseExpires: now.Add(time.Hour), LeaseStore: "an earlier opening", UpdatedAt: now})
				})
			}
			reset(true)
			co, _ := benchCoordinator(b, st, false)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i > 0 {
					b.StopTimer()
					reset(false)
					b.StartTimer()
				}
				got, err := co.Reconcile(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if len(got) != pending {
					b.Fatalf("reconciled %d, want %d", len(got), pending)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N*pending)/b.Elapsed().Seconds(), "handoffs/s")
		})
	}
}
