package session_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// frozenEngine starts through the scripted engine, freezing first (until
// wake is closed) when frozen is set: as a process stopped between the
// commit that recorded its launch and the spawn. With admit it supports
// two-phase starts the way an in-process engine does: the scripted process
// starts only once StartRequest.Admit admitted it. It is not an
// engine.Reaper.
type frozenEngine struct {
	eng    *enginetest.Engine
	admit  bool
	frozen chan struct{} // receives once the start froze
	wake   chan struct{}
}

func (f *frozenEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	f.frozen <- struct{}{}
	<-f.wake
	if f.admit {
		if err := req.Admit(ctx); err != nil {
			return nil, err
		}
	}
	return f.eng.Start(ctx, req)
}

// startOnly hides every capability of an engine but Start (not a Reaper).
type startOnly struct{ engine.Engine }

// reapHooked is the scripted engine (an engine.Reaper) running hook once,
// after the first ReapLaunch scanned.
type reapHooked struct {
	*enginetest.Engine
	once sync.Once
	hook func()
}

func (r *reapHooked) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	out, err := r.Engine.ReapLaunch(ctx, id)
	r.once.Do(r.hook)
	return out, err
}

// hookedStore runs hook once, after the first View that returns.
type hookedStore struct {
	store.Store
	once sync.Once
	hook func()
}

func (h *hookedStore) View(ctx context.Context, fn func(store.Tx) error) error {
	err := h.Store.View(ctx, fn)
	h.once.Do(h.hook)
	return err
}

// TestAdmission: service A starts a session and freezes before the spawn;
// service B (another process on the same machine and store) reaps A's
// launch. Reaped first, A's launch is refused when it wakes and nothing
// starts (with two-phase starts) or what started is stopped at once
// (without). Admitted between B's scan (a Reaper's ReapLaunch; without
// one, B's read of the live launches) and B's commit, A's launch is
// reaped again by a Reaper (and stopped), and left unconfirmed without one
// (its process runs, admitted, on a live host).
func TestAdmission(t *testing.T) {
	tests := []struct {
		name       string
		admit      bool // A's engine holds the process until admitted
		duringReap bool // A wakes between B's read and B's commit
		reaper     bool // B's engine is an engine.Reaper
		wantA      error
		wantGone   bool // B's Reap confirms A's launch gone
		wantLive   bool // A's process runs at the end
	}{
		{"two-phase/reaped-first", true, false, true, session.ErrLaunchRefused, true, false},
		{"two-phase/reaped-first/no-reaper", true, false, false, session.ErrLaunchRefused, true, false},
		{"two-phase/admitted-during-reap", true, true, true, nil, true, false},
		{"two-phase/admitted-during-reap/no-reaper", true, true, false, nil, false, true},
		{"no-two-phase/reaped-first", false, false, true, session.ErrLaunchRefused, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			fe := &frozenEngine{eng: f.eng, admit: tt.admit, frozen: make(chan struct{}, 1), wake: make(chan struct{})}
			a, err := session.New(f.st, fe, session.Options{Clock: f.clk, InstanceID: "svc-a"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = a.Close(context.Background()) })
			type started struct {
				sess store.Session
				err  error
			}
			done := make(chan started, 1)
			go func() {
				s, err := a.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hello"})
				done <- started{s, err}
			}()
			<-fe.frozen
			var live []store.Launch
			if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(f.ws); return err }); err != nil {
				t.Fatal(err)
			}
			if len(live) != 1 {
				t.Fatalf("live launches while A is frozen: %+v; want A's", live)
			}
			lid := live[0].ID

			var a2 started
			wakeA := func() {
				close(fe.wake)
				a2 = <-done
			}
			var (
				st   store.Store   = f.st
				engB engine.Engine = f.eng
			)
			switch {
			case tt.duringReap && tt.reaper:
				engB = &reapHooked{Engine: f.eng, hook: wakeA}
			case tt.duringReap:
				st = &hookedStore{Store: f.st, hook: wakeA}
			}
			if !tt.reaper {
				engB = startOnly{engB}
			}
			b, err := session.New(st, engB, session.Options{Clock: f.clk, InstanceID: "svc-b"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close(context.Background()) })
			res, err := session.Supervise(b).Reap(f.ctx, f.ws, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.duringReap {
				wakeA()
			}
			if gone := len(res.Gone) == 1 && res.Gone[0].ID == lid; gone != tt.wantGone || len(res.Gone)+len(res.Unconfirmed) != 1 {
				t.Errorf("B's Reap = %+v; want A's launch gone=%t", res, tt.wantGone)
			}
			if tt.wantA == nil && a2.err != nil || tt.wantA != nil && !errors.Is(a2.err, tt.wantA) {
				t.Errorf("A's Start = %v; want %v", a2.err, tt.wantA)
			}
			var procs []*enginetest.Process
			for _, l := range f.eng.Launches() {
				if l.Req.LaunchID == lid && l.Proc != nil {
					procs = append(procs, l.Proc)
				}
			}
			switch {
			case tt.admit && tt.wantA != nil && len(procs) != 0:
				t.Errorf("A's refused launch started %d processes; want none", len(procs))
			case !tt.admit && len(procs) != 1:
				t.Errorf("A's launch started %d processes; want 1 (started, then stopped)", len(procs))
			}
			running := 0
			for _, p := range procs {
				if p.Running() {
					running++
				}
			}
			if want := map[bool]int{false: 0, true: 1}[tt.wantLive]; running != want {
				t.Errorf("A's processes running at the end: %d; want %d", running, want)
			}
			l := launchOf(t, f, lid)
			if l.Gone == tt.wantLive {
				t.Errorf("A's launch record: %+v; want Gone = %t", l, !tt.wantLive)
			}
			if l.Admitted != (tt.admit && tt.duringReap) {
				t.Errorf("A's launch record Admitted = %t; want %t", l.Admitted, tt.admit && tt.duringReap)
			}
		})
	}
}

func launchOf(t *testing.T, f *fixture, id baton.LaunchID) store.Launch {
	t.Helper()
	var l store.Launch
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { l, err = tx.GetLaunch(id); return err }); err != nil {
		t.Fatal(err)
	}
	return l
}
