package handoff

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/qmuntal/stateless"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// The target these benchmarks check (by reading them, never by a timed
// assertion): one Coordinator transition costs at most 3x a bare stateless
// FireCtx plus the store write it needs. Compare
//
//	BenchmarkTransition/internal <= 3 * BenchmarkStatelessFire/* + BenchmarkStoreWrite
//
// BenchmarkLifecycle is the end-to-end figure (handoffs/s) with an engine
// that answers at once.

var (
	benchSource = baton.EngineConfig{Engine: "demo", Model: "demo-small"}
	benchTarget = baton.EngineConfig{Engine: "demo", Model: "demo-large"}
)

// perSecond reports ops/s under name, from the benchmark's elapsed time.
func perSecond(b *testing.B, name string) {
	b.Helper()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, name)
	}
}

// pingState is the externally stored state of the bare machine; pingKey
// carries it in the context, as fireKey carries a *fire.
type pingState struct{ s store.HandoffState }
type pingKey struct{}

func pingOf(ctx context.Context) *pingState { return ctx.Value(pingKey{}).(*pingState) }

func pingEnter(ctx context.Context, _ ...any) error { pingOf(ctx).s = pingOf(ctx).s; return nil }

// BenchmarkStatelessFire is the library alone, configured as the
// Coordinator's machine is: external storage reached through the context,
// FiringImmediate, an entry action per state, typed string states and
// triggers. One op is one FireCtx, including the context.WithValue that
// carries the state (apply needs one per firing too).
func BenchmarkStatelessFire(b *testing.B) {
	const a, z = store.StateFailed, store.StateInterrupted
	sm := stateless.NewStateMachineWithExternalStorage(
		func(ctx context.Context) (stateless.State, error) { return pingOf(ctx).s, nil },
		func(ctx context.Context, s stateless.State) error { pingOf(ctx).s = s.(store.HandoffState); return nil },
		stateless.FiringImmediate)
	sm.Configure(a).Permit(triggerRetry, z).PermitReentry(triggerShutdown).OnEntry(pingEnter)
	sm.Configure(z).Permit(triggerRetry, a).PermitReentry(triggerShutdown).OnEntry(pingEnter)
	bg := context.Background()
	for _, tt := range []struct {
		name    string
		trigger machineTrigger
	}{{"Permit", triggerRetry}, {"PermitReentry", triggerShutdown}} {
		b.Run(tt.name, func(b *testing.B) {
			st := &pingState{s: a}
			b.ReportAllocs()
			for b.Loop() {
				if err := sm.FireCtx(context.WithValue(bg, pingKey{}, st), tt.trigger); err != nil {
					b.Fatal(err)
				}
			}
			perSecond(b, "transitions/s")
		})
	}
}

// benchEnv is a Coordinator over memstore and an instant scripted engine.
type benchEnv struct {
	ctx context.Context
	eng *enginetest.Engine
	co  *Coordinator
	svc *session.Service
	st  *memstore.Store
}

// newBenchEnv builds the environment; report-only turns submit a report
// through SubmitReport unless hang is set, in which case they submit
// nothing and run until stopped.
func newBenchEnv(b *testing.B, hang bool, opts ...Option) *benchEnv {
	b.Helper()
	e := &benchEnv{ctx: context.Background(), st: memstore.New()}
	e.eng = enginetest.New(enginetest.Options{
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
			return e.co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
		},
	})
	b.Cleanup(e.eng.Close)
	co, err := NewOn(e.st, engine.Registry{"demo": e.eng}, session.Options{}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	e.co, e.svc = co, co.Sessions()
	return e
}

// workspace creates ws (rooted at root, "" for none) and starts its
// source session.
func (e *benchEnv) workspace(b *testing.B, ws baton.WorkspaceID, root string) store.Session {
	b.Helper()
	if _, err := e.svc.CreateWorkspace(e.ctx, store.Workspace{ID: ws, Mission: "benchmark", Root: root, Config: benchSource}); err != nil {
		b.Fatal(err)
	}
	src, err := e.svc.Start(e.ctx, session.TurnRequest{Workspace: ws, Prompt: "benchmark"})
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// waitState polls (bounded) until handoff id is in state.
func (e *benchEnv) waitState(b *testing.B, id baton.HandoffID, state store.HandoffState) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h, err := e.co.load(e.ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		if h.State == state {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("handoff %s: state %s (error %q), want %s", id, h.State, h.Error, state)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// generating returns a handoff parked in generating: its report-only turn
// runs and submits nothing, so the driver waits on it and the benchmark
// owns every transition.
func (e *benchEnv) generating(b *testing.B) store.Handoff {
	b.Helper()
	src := e.workspace(b, "ws-bench", "")
	h, err := e.co.Create(e.ctx, Request{Workspace: "ws-bench", RequestID: "bench", SourceSession: src.ID, GenerateSummary: true, Target: benchTarget})
	if err != nil {
		b.Fatal(err)
	}
	e.waitState(b, h.ID, store.StateGenerating)
	if _, err := e.eng.WaitLaunches(e.ctx, 2); err != nil {
		b.Fatal(err)
	}
	got, err := e.co.load(e.ctx, h.ID)
	if err != nil {
		b.Fatal(err)
	}
	return got
}

// BenchmarkTransition is one Coordinator transition through apply: one
// store Update that loads the handoff and its source, one FireCtx, one
// write of the row, and the (no-op) logging and observation after commit.
//
//   - internal: SubmitReport in generating, an InternalTransition whose only
//     effect sets the report: the machinery alone.
//   - reentry: Shutdown on an interrupted handoff, a PermitReentry whose
//     entry action settles the attempt (restores the source's
//     configuration and activation, records the attempt): a transition
//     with the effects of a real one.
func BenchmarkTransition(b *testing.B) {
	b.Run("internal", func(b *testing.B) {
		e := newBenchEnv(b, true)
		h := e.generating(b)
		in := input{trigger: triggerSubmitReport, report: "# Report\nbenchmark"}
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := e.co.apply(e.ctx, h.ID, in, nil); err != nil {
				b.Fatal(err)
			}
		}
		perSecond(b, "transitions/s")
	})
	b.Run("reentry", func(b *testing.B) {
		e := newBenchEnv(b, true)
		h := e.generating(b)
		in := input{trigger: triggerShutdown, confirmed: true, errMsg: "interrupted by the benchmark"}
		if _, _, err := e.co.apply(e.ctx, h.ID, in, pendingOnly); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			got, _, err := e.co.apply(e.ctx, h.ID, in, pendingOnly)
			if err != nil {
				b.Fatal(err)
			}
			if got.State != store.StateInterrupted {
				b.Fatalf("state %s, want interrupted", got.State)
			}
		}
		perSecond(b, "transitions/s")
	})
}

// BenchmarkStoreWrite is the store work a transition cannot avoid: one
// memstore Update that reads the same handoff row and writes it back.
func BenchmarkStoreWrite(b *testing.B) {
	e := newBenchEnv(b, true)
	h := e.generating(b)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		err := e.st.Update(e.ctx, func(tx store.Tx) error {
			got, err := tx.GetHandoff(h.ID)
			if err != nil {
				return err
			}
			got.UpdatedAt = now
			return tx.PutHandoff(got)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	perSecond(b, "writes/s")
}

// BenchmarkLifecycle is a whole transfer, Create to completed, with an
// engine that answers at once: stop the source, (report-only turn,) start
// the target, complete. Each op gets a fresh workspace with a running
// source, made with the timer stopped (a workspace's sessions are scanned
// on every activation, so reusing one would make the cost grow with b.N);
// the previous op's target is stopped then too. Completion is signalled by
// the observer, not polled.
func BenchmarkLifecycle(b *testing.B) {
	for _, tt := range []struct {
		name    string
		summary bool
		publish bool // a workspace root, so the prompt document is written (fsync)
	}{
		{"no-summary", false, false},
		{"summary", true, false},
		{"summary+document", true, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			settled := make(chan store.Handoff, 1)
			e := newBenchEnv(b, false, WithObserver(func(ev Event) {
				if !isActive(ev.Handoff.State) {
					select {
					case settled <- ev.Handoff:
					default:
					}
				}
			}))
			root := ""
			if tt.publish {
				root = b.TempDir()
			}
			var prev baton.WorkspaceID
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if prev != "" {
					if _, err := Supervise(e.svc).Halt(e.ctx, prev); err != nil {
						b.Fatal(err)
					}
				}
				ws := baton.WorkspaceID(fmt.Sprintf("ws-%d", i))
				src := e.workspace(b, ws, root)
				prev = ws
				b.StartTimer()
				if _, err := e.co.Create(e.ctx, Request{Workspace: ws, RequestID: "r", SourceSession: src.ID,
					GenerateSummary: tt.summary, Target: benchTarget}); err != nil {
					b.Fatal(err)
				}
				if h := <-settled; h.State != store.StateCompleted {
					b.Fatalf("handoff settled in %s: %s", h.State, h.Error)
				}
			}
			perSecond(b, "handoffs/s")
		})
	}
}
