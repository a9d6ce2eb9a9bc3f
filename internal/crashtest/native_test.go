//go:build linux

package crashtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// recorder is the exec engine with every StartRequest and Process kept.
// The embedded Engine keeps its capabilities (engine.Reconfigurer,
// engine.Reaper).
type recorder struct {
	*exec.Engine
	mu    sync.Mutex
	reqs  []engine.StartRequest
	procs []engine.Process
}

func (r *recorder) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	p, err := r.Engine.Start(ctx, req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if err == nil {
		r.procs = append(r.procs, p)
	}
	return p, err
}

func (r *recorder) starts() []engine.StartRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]engine.StartRequest(nil), r.reqs...)
}

// startOnly shows only Start: an engine that cannot carry a native session.
type startOnly struct{ e engine.Engine }

func (s startOnly) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	return s.e.Start(ctx, req)
}

// newRecorder runs the stand-in agent through the exec engine; the model
// "refuse" makes it refuse its first turn.
func newRecorder(t *testing.T, reconfigure bool) *recorder {
	t.Helper()
	return &recorder{Engine: newAgentEngine(t, reconfigure, nil)}
}

// newAgentEngine is the exec engine running the stand-in agent, on a data
// directory of its own; env (nil: the host's) is the children's
// environment.
func newAgentEngine(t *testing.T, reconfigure bool, env []string) *exec.Engine {
	t.Helper()
	return clitest.NewEngine(t, exec.Options{
		DataDir:   t.TempDir(),
		StopGrace: 50 * time.Millisecond,
		Env:       env,
		Profile: exec.Profile{
			Name:        "agent",
			Command:     bins["agent"],
			Fresh:       []string{"-prompt", "{prompt}", "{flags}"},
			Resume:      []string{"-resume", "{native_id}", "-prompt", "{prompt}", "{flags}"},
			Model:       []string{"-model", "{model}"},
			Models:      []string{"small", "large", "refuse"},
			Reconfigure: reconfigure,
			Output: exec.Output{
				JSON:     true,
				NativeID: []exec.Rule{{Fields: map[string]string{"type": "init"}, ID: "session_id"}},
				Ready:    []exec.Rule{{Fields: map[string]string{"type": "ready"}}},
				Reject:   []exec.Rule{{Fields: map[string]string{"type": "rejected"}}},
			},
		},
	})
}

// world is a coordinator over a memstore with a running source session.
type world struct {
	ctx context.Context
	st  store.Store
	co  *handoff.Coordinator
	src store.Session
}

func newWorld(t *testing.T, eng engine.Engine) world {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	st := memstore.New()
	reg := engine.Registry{"agent": eng}
	svc, err := session.New(st, reg, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	co, err := handoff.New(svc, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := co.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	root := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws", Root: root, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: "agent", Model: "small"}}); err != nil {
		t.Fatal(err)
	}
	src, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Fix the parser."})
	if err != nil {
		t.Fatal(err)
	}
	if src.NativeID == "" {
		t.Fatal("the source has no native id")
	}
	return world{ctx: ctx, st: st, co: co, src: src}
}

// transfer asks for a transfer to model and waits until it settles.
func (w world) transfer(t *testing.T, model string, native, summary bool) store.Handoff {
	t.Helper()
	h, err := w.co.Create(w.ctx, handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: w.src.ID,
		Native: native, GenerateSummary: summary, Target: baton.EngineConfig{Engine: "agent", Model: model}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if h, err = w.co.Wait(w.ctx, "ws", h.ID); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return h
}

func (w world) session(t *testing.T, id baton.SessionID) store.Session {
	t.Helper()
	var s store.Session
	if err := w.st.View(w.ctx, func(tx store.Tx) (err error) { s, err = tx.GetSession(id); return err }); err != nil {
		t.Fatalf("session %s: %v", id, err)
	}
	return s
}

// TestNativeTransfer: a transfer with Request.Native on the exec engine
// whose profile can reconfigure resumes the source's own native session
// under the target configuration (one start: Mode Resume, the source's
// NativeID, the target Config; no report-only turn even when a summary is
// asked for) and completes with the target current, carrying that native
// id.
func TestNativeTransfer(t *testing.T) {
	for _, summary := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "summary-asked"}[summary], func(t *testing.T) {
			rec := newRecorder(t, true)
			w := newWorld(t, rec)
			before := len(rec.starts())
			h := w.transfer(t, "large", true, summary)
			if h.State != store.StateCompleted || !h.Native || h.Report != "" {
				t.Fatalf("transfer = %s native=%t report=%t (%s); want completed, native, no report", h.State, h.Native, h.Report != "", h.Error)
			}
			got := rec.starts()[before:]
			target := baton.EngineConfig{Engine: "agent", Model: "large"}
			want := []engine.StartRequest{{Workspace: "ws", Session: h.TargetSession, Config: target, Mode: engine.Resume,
				NativeID: w.src.NativeID, Turn: transcript.Normal, Attempt: h.Attempt, ReadyTimeout: engine.DefaultReadyTimeout}}
			opt := cmp.FilterPath(func(p cmp.Path) bool {
				switch p.Last().String() {
				case ".Prompt", ".Dir", ".Owner", ".LaunchID", ".Report", ".Admit":
					return true
				}
				return false
			}, cmp.Ignore())
			if d := cmp.Diff(want, got, opt); d != "" {
				t.Errorf("starts of the transfer (-want +got):\n%s", d)
			}
			cur, err := w.co.Sessions().Current(w.ctx, "ws")
			if err != nil {
				t.Fatal(err)
			}
			if cur.ID != h.TargetSession || cur.NativeID != w.src.NativeID || cur.Config.Model != "large" || cur.Status != store.SessionRunning {
				t.Errorf("current = %s native %q on %s, %s; want the target %s carrying %q on large, running",
					cur.ID, cur.NativeID, cur.Config.Model, cur.Status, h.TargetSession, w.src.NativeID)
			}
		})
	}
}

// rollback is what a failed target leaves, to compare the native path's
// with a briefed fresh target's.
type rollback struct {
	State           store.HandoffState
	StopUnconfirmed bool
	CurrentIsSource bool
	CurrentConfig   baton.EngineConfig
	SourceStatus    store.SessionStatus
	TargetStatus    store.SessionStatus
	Reserved        bool
	LiveLaunches    int
	Running         int // the engine's processes not yet done
}

func (w world) rollback(t *testing.T, h store.Handoff, rec *recorder) rollback {
	t.Helper()
	cur, err := w.co.Sessions().Current(w.ctx, "ws")
	if err != nil {
		t.Fatal(err)
	}
	r := rollback{State: h.State, StopUnconfirmed: h.StopUnconfirmed, CurrentIsSource: cur.ID == w.src.ID, CurrentConfig: cur.Config,
		SourceStatus: w.session(t, w.src.ID).Status, TargetStatus: w.session(t, h.TargetSession).Status}
	if err := w.st.View(w.ctx, func(tx store.Tx) error {
		_, err := tx.GetReservation("ws")
		r.Reserved = err == nil
		live, err := tx.LiveLaunches("ws")
		r.LiveLaunches = len(live)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, p := range rec.procs {
		select {
		case <-p.Done():
		default:
			r.Running++
		}
	}
	return r
}

// TestNativeReadinessFailure: a native target that refuses its first turn
// fails the transfer and rolls back exactly as a briefed fresh target that
// refuses it does.
func TestNativeReadinessFailure(t *testing.T) {
	run := func(native bool) (rollback, []engine.StartRequest) {
		rec := newRecorder(t, true)
		w := newWorld(t, rec)
		n := len(rec.starts())
		h := w.transfer(t, "refuse", native, false)
		return w.rollback(t, h, rec), rec.starts()[n:]
	}
	fresh, _ := run(false)
	native, starts := run(true)
	if fresh.State != store.StateFailed {
		t.Fatalf("the fresh target's transfer ended %s; want failed", fresh.State)
	}
	if d := cmp.Diff(fresh, native); d != "" {
		t.Errorf("the native path's rollback differs from a failed fresh target's (-fresh +native):\n%s", d)
	}
	if len(starts) != 1 || starts[0].Mode != engine.Resume || starts[0].Config.Model != "refuse" {
		t.Errorf("native starts = %+v; want one resume under the target configuration", starts)
	}
}

// TestNativeUnsupported: when the target engine cannot carry the source's
// native session (a profile that does not reconfigure, or an engine that
// is no engine.Reconfigurer), Create refuses with baton.ErrUnsupported
// (EUNSUPPORTED) and changes nothing: no handoff, no change in the feed,
// no launch, the source still current and running.
func TestNativeUnsupported(t *testing.T) {
	tests := []struct {
		name string
		eng  func(*recorder) engine.Engine
		rec  bool // the profile says it can reconfigure
	}{
		{"profile cannot reconfigure", func(r *recorder) engine.Engine { return r }, false},
		{"engine is no Reconfigurer", func(r *recorder) engine.Engine { return startOnly{r} }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, tc.rec)
			w := newWorld(t, tc.eng(rec))
			type snapshot struct {
				Seq      int64
				Handoffs int
				Current  baton.SessionID
				Status   store.SessionStatus
				Starts   int
				Running  int
				Reserved bool
			}
			snap := func() snapshot {
				var s snapshot
				if err := w.st.View(w.ctx, func(tx store.Tx) (err error) {
					_, rerr := tx.GetReservation("ws")
					s.Reserved = rerr == nil
					s.Seq, err = tx.LastSeq("ws")
					return err
				}); err != nil {
					t.Fatal(err)
				}
				hs, err := w.co.List(w.ctx, "ws")
				if err != nil {
					t.Fatal(err)
				}
				cur, err := w.co.Sessions().Current(w.ctx, "ws")
				if err != nil {
					t.Fatal(err)
				}
				s.Handoffs, s.Current, s.Status, s.Starts = len(hs), cur.ID, cur.Status, len(rec.starts())
				rec.mu.Lock()
				for _, p := range rec.procs {
					select {
					case <-p.Done():
					default:
						s.Running++
					}
				}
				rec.mu.Unlock()
				return s
			}
			before := snap()
			_, err := w.co.Create(w.ctx, handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: w.src.ID,
				Native: true, Target: baton.EngineConfig{Engine: "agent", Model: "large"}})
			if !errors.Is(err, baton.ErrUnsupported) || baton.ErrorCode(err) != baton.ErrUnsupported.Code {
				t.Fatalf("Create = %v (code %q); want %s", err, baton.ErrorCode(err), baton.ErrUnsupported.Code)
			}
			if d := cmp.Diff(before, snap()); d != "" {
				t.Errorf("a refused native request changed something (-before +after):\n%s", d)
			}
			if before.Running != 1 || before.Current != w.src.ID || before.Status != store.SessionRunning {
				t.Errorf("before = %+v; want the source current and running, one process", before)
			}
		})
	}
}
