package session_test

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// t0 is the fake clock's start in every test.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

var (
	cfgA     = baton.EngineConfig{Engine: "demo", Model: "demo-1"}
	cfgA2    = baton.EngineConfig{Engine: "demo", Model: "demo-2"}
	cfgOther = baton.EngineConfig{Engine: "other", Model: "o-1"}
	cfgAlt   = baton.EngineConfig{Engine: "demo", Model: "demo-1", Account: "work"}
)

// fixture is a Service over memstore and the scripted engine, sharing a fake
// clock, with one workspace "ws-1" on cfgA.
type fixture struct {
	t   *testing.T
	ctx context.Context
	st  store.Store
	eng *enginetest.Engine
	svc *session.Service
	clk *clock.Fake
	ws  baton.WorkspaceID
}

// newFixture builds the fixture; opts, when given, adjust the engine's
// options (the clock is always the fixture's).
func newFixture(t *testing.T, opts ...func(*enginetest.Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), st: memstore.New(), clk: clock.NewFake(t0), ws: "ws-1"}
	eo := enginetest.Options{}
	for _, o := range opts {
		o(&eo)
	}
	eo.Clock = f.clk
	f.eng = enginetest.New(eo)
	t.Cleanup(f.eng.Close)
	f.svc = f.newService(f.st)
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: f.ws, Name: "demo", Mission: "ship it", Config: cfgA}); err != nil {
		t.Fatal(err)
	}
	return f
}

// newService returns another Service over st with the fixture's engine and
// clock: a process restart when st is the fixture's store.
func (f *fixture) newService(st store.Store) *session.Service {
	f.t.Helper()
	svc, err := session.New(st, f.eng, session.Options{Clock: f.clk})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		if err := svc.Close(context.Background()); err != nil {
			f.t.Errorf("Close: %v", err)
		}
	})
	return svc
}

// start runs an ordinary Start and fails the test on error.
func (f *fixture) start(req session.TurnRequest) store.Session {
	f.t.Helper()
	if req.Workspace == "" {
		req.Workspace = f.ws
	}
	s, err := f.svc.Start(f.ctx, req)
	if err != nil {
		f.t.Fatalf("Start(%+v): %v", req, err)
	}
	return s
}

// stop stops the workspace's process and waits until its session row says
// it ended, so that the next start does not race the exit being recorded.
func (f *fixture) stop(id baton.SessionID) {
	f.t.Helper()
	out, err := f.svc.Stop(f.ctx, f.ws)
	if err != nil || !out.Confirmed() {
		f.t.Fatalf("Stop: %v %v", out, err)
	}
	f.waitSession(id, func(s store.Session) bool { return s.Status == store.SessionEnded })
}

// session reads a session row.
func (f *fixture) session(id baton.SessionID) store.Session {
	f.t.Helper()
	var s store.Session
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { s, err = tx.GetSession(id); return err }); err != nil {
		f.t.Fatalf("GetSession(%s): %v", id, err)
	}
	return s
}

// waitSession polls (bounded) until the row of id satisfies ok. Exits are
// recorded by a watcher goroutine, so a test waits for them this way.
func (f *fixture) waitSession(id baton.SessionID, ok func(store.Session) bool) store.Session {
	f.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := f.session(id)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("session %s never reached the expected state: %+v", id, s)
		}
		time.Sleep(time.Millisecond)
	}
}

// update runs fn in a store transaction and fails the test on error.
func (f *fixture) update(fn func(tx store.Tx) error) {
	f.t.Helper()
	if err := f.st.Update(f.ctx, fn); err != nil {
		f.t.Fatal(err)
	}
}

// noNativeID asks insertSession for a row without a native id (killed
// before the engine minted one); by default a row gets "n-<id>".
const noNativeID = "<none>"

// insertSession adds a session row by hand (legacy or scripted history).
func (f *fixture) insertSession(s store.Session) store.Session {
	f.t.Helper()
	if s.Workspace == "" {
		s.Workspace = f.ws
	}
	if s.Config == (baton.EngineConfig{}) {
		s.Config = cfgA
	}
	if s.Status == "" {
		s.Status = store.SessionEnded
	}
	switch s.NativeID {
	case "":
		s.NativeID = "n-" + string(s.ID)
	case noNativeID:
		s.NativeID = ""
	}
	var out store.Session
	f.update(func(tx store.Tx) (err error) {
		if err := tx.PutSession(s); err != nil {
			return err
		}
		if out, err = tx.GetSession(s.ID); err != nil {
			return err
		}
		return workspace.Refresh(tx, s.Workspace, f.clk.Now())
	})
	return out
}

// reserve takes the workspace's reservation for a made-up handoff.
func (f *fixture) reserve(h baton.HandoffID) workspace.Owner {
	f.t.Helper()
	var o workspace.Owner
	f.update(func(tx store.Tx) (err error) {
		o.Token, o.Epoch, err = workspace.Take(tx, f.ws, h, workspace.Lease{Holder: "test", Expires: f.clk.Now().Add(time.Minute)}, f.clk.Now())
		return err
	})
	return o
}

// release releases the reservation taken for h.
func (f *fixture) release(h baton.HandoffID) {
	f.t.Helper()
	f.update(func(tx store.Tx) error { return workspace.Release(tx, f.ws, h, f.clk.Now()) })
}

// setConfig changes the workspace's configuration by hand.
func (f *fixture) setConfig(cfg baton.EngineConfig) {
	f.t.Helper()
	f.update(func(tx store.Tx) error {
		w, err := tx.GetWorkspace(f.ws)
		if err != nil {
			return err
		}
		w.Config = cfg
		return tx.PutWorkspace(w)
	})
}

// launches returns the engine's Start calls.
func (f *fixture) launches() []enginetest.Launch { return f.eng.Launches() }

// mustIs fails the test unless errors.Is(err, want).
func mustIs(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
}

// startReqs returns the engine requests of every launch, failed ones too.
func startReqs(ls []enginetest.Launch) []engine.StartRequest {
	out := make([]engine.StartRequest, len(ls))
	for i, l := range ls {
		out[i] = l.Req
	}
	return out
}

// gateStore is a store.Store whose next Update, once armed, waits until
// released: it lets a test hold a background write (a watcher recording an
// exit) while the foreground goes on.
type gateStore struct {
	store.Store
	mu   sync.Mutex
	gate *gate
}

// gate is one armed Update: reached is closed when it starts waiting,
// closing release lets it go on, and done is closed once it returned.
type gate struct {
	reached, release, done chan struct{}
}

func newGateStore(st store.Store) *gateStore { return &gateStore{Store: st} }

// arm makes the next Update wait.
func (g *gateStore) arm() *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = &gate{reached: make(chan struct{}), release: make(chan struct{}), done: make(chan struct{})}
	return g.gate
}

func (g *gateStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	g.mu.Lock()
	gt := g.gate
	g.gate = nil
	g.mu.Unlock()
	if gt == nil {
		return g.Store.Update(ctx, fn)
	}
	close(gt.reached)
	<-gt.release
	defer close(gt.done)
	return g.Store.Update(ctx, fn)
}

// fired is what FireDue returned, sorted by the status it left each
// wakeup in.
type fired struct{ Fired, Deferred, Refused []baton.WakeupID }

// fireDue calls FireDue and sorts its answer (see fired).
func (f *fixture) fireDue(ctx context.Context, limit int) (fired, error) {
	var res fired
	ws, err := f.svc.FireDue(ctx, limit)
	for _, w := range ws {
		switch w.Status {
		case store.WakeupFired:
			res.Fired = append(res.Fired, w.ID)
		case store.WakeupPending:
			res.Deferred = append(res.Deferred, w.ID)
		case store.WakeupCancelled:
			res.Refused = append(res.Refused, w.ID)
		}
	}
	return res, err
}

// always is a Briefing's Events that yields events whatever the
// continuation.
func always(events iter.Seq[transcript.Event]) func(store.Continuation) iter.Seq[transcript.Event] {
	return func(store.Continuation) iter.Seq[transcript.Event] { return events }
}

// queued is what RunQueued returned, sorted by the state it left each
// continuation in.
type queued struct {
	Started  []session.ContinueResult
	Refused  []store.Continuation
	Deferred []baton.ContinuationID
}

// runQueued calls RunQueued and sorts its answer (see queued).
func (f *fixture) runQueued(b session.Briefing, max int) (queued, error) {
	var res queued
	all, err := f.svc.RunQueued(f.ctx, b, max)
	for _, r := range all {
		switch r.Continuation.State {
		case store.ContinuationRefused:
			res.Refused = append(res.Refused, r.Continuation)
		case store.ContinuationQueued:
			res.Deferred = append(res.Deferred, r.Continuation.ID)
		default:
			res.Started = append(res.Started, r)
		}
	}
	return res, err
}
