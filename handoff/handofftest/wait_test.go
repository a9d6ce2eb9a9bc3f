package handofftest

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// holdingStore holds the first lease renewal's transaction (its View,
// which finds the leases to renew) that comes once hold is set, until
// release is closed: a node's renewal loop caught between a renewal and
// its next timer. (Other transactions pass: a session's queued
// instruction delivery, say, may run at that moment.)
type holdingStore struct {
	store.Store
	hold             *atomic.Bool
	entered, release chan struct{}
}

func (s holdingStore) View(ctx context.Context, fn func(store.Tx) error) error {
	if renewing() && s.hold.CompareAndSwap(true, false) {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Store.View(ctx, fn)
}

// The harness is not at rest while a node that runs has not armed its next
// lease renewal, even when another timer (a crashed life's renewal loop
// keeps arming its own) makes up the count of pending timers: moving the
// clock on then finds no renewal of the node to fire, and two such moves
// let its lease lapse although it runs ("lease not renewed").
func TestAwaitWaitsForTheNextLeaseRenewal(t *testing.T) {
	var hold atomic.Bool
	entered, release := make(chan struct{}, 1), make(chan struct{})
	cfg := Config{Nodes: 1, WrapStore: func(st store.Store) store.Store {
		return holdingStore{Store: st, hold: &hold, entered: entered, release: release}
	}}
	done := false
	rapid.Check(t, func(rt *rapid.T) {
		if done {
			return // one world is enough: nothing below is drawn
		}
		done = true
		h := newHarness(rt, cfg)
		defer h.close()
		defer func() {
			select {
			case <-release:
			default:
				close(release)
			}
		}()
		// Life 0 crashes: its Coordinator is abandoned, its renewal loop
		// goes on arming timers. Life 1 runs.
		h.actCrash(rt)
		h.actRestart(rt)
		hold.Store(true)
		h.advanceClock(leaseTTL / 3)
		select {
		case <-entered: // life 1's renewal fired and is held before its next timer
		case <-time.After(h.cfg.Wait):
			t.Fatal("the running life's lease renewal never came")
		}
		// Wait for the crashed life to arm its next renewal: one pending
		// timer, as many as the harness counts for the running node.
		for deadline := time.Now().Add(h.cfg.Wait); h.clk.PendingBy(h.clk.Now().Add(leaseTTL/3)) < 1; {
			if time.Now().After(deadline) {
				t.Fatal("the crashed life armed no renewal")
			}
			time.Sleep(100 * time.Microsecond)
		}
		if why := h.atRest(); why == "" {
			t.Fatal("at rest while node-0's next lease renewal is not armed")
		} else {
			t.Logf("not at rest, as it must be: %s", why)
		}
		close(release)
		h.await() // the renewal goes on and arms the next one: at rest
	})
}

// readAfterReadiness is the store the harness reads (nodes write to the
// memstore inside it, untouched): once the process in target has its
// readiness resolved, each read waits (bounded) until the transfer has
// settled, as the scheduler may have it.
type readAfterReadiness struct {
	*memstore.Store
	target func() *enginetest.Process
	id     func() baton.HandoffID
}

func (s readAfterReadiness) View(ctx context.Context, fn func(store.Tx) error) error {
	if p := s.target(); p != nil && resolved(p) {
		for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Microsecond) {
			var h store.Handoff
			err := s.Store.View(ctx, func(tx store.Tx) (err error) { h, err = tx.GetHandoff(s.id()); return err })
			if err == nil && h.State != store.StateStarting {
				break
			}
		}
	}
	return s.Store.View(ctx, fn)
}

// resolved reports whether p's readiness is resolved, without waiting.
func resolved(p *enginetest.Process) bool {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Ready(ctx)
	return !errors.Is(err, context.Canceled)
}

// Releasing a held target predicts from the node that drove the transfer
// before the release: the completion that follows releases the reservation,
// and the harness read the driver only after releasing, so a completion
// that came first left no driver and the model at starting ("completed,
// model starting"). The store the harness reads here lets the completion
// come first whenever the harness reads after the release.
func TestReleasePredictsFromTheDriverBeforeTheRelease(t *testing.T) {
	var h *harness
	var m *model
	var st *memstore.Store
	target := func() *enginetest.Process {
		if h == nil || m == nil {
			return nil
		}
		var got store.Handoff // read past the hook: it asks this
		if err := st.View(context.Background(), func(tx store.Tx) (err error) { got, err = tx.GetHandoff(m.id); return err }); err != nil {
			return nil
		}
		if l := h.targetLaunch(m, got.TargetSession); l != nil {
			return l.Proc
		}
		return nil
	}
	cfg := Config{Nodes: 1}
	cfg.NewStore = func() (store.Store, func(), error) {
		st = memstore.New()
		return readAfterReadiness{Store: st, target: target, id: func() baton.HandoffID { return m.id }}, func() {}, nil
	}
	// The node writes to the memstore itself.
	cfg.WrapStore = func(store.Store) store.Store { return st }
	rapid.Check(t, func(rt *rapid.T) {
		h, m = nil, nil
		hh := newHarness(rt, cfg)
		defer hh.close()
		const ws = baton.WorkspaceID("ws-2") // nothing runs there
		hh.setPlan(ws, attemptPlan{report: reportClean, target: targetHold, reportText: reportText(ws, 0)})
		n := hh.nodes[0]
		req := handoff.Request{Workspace: ws, RequestID: "req-held", SourceSession: hh.current(ws), Target: engineB}
		srcCfg := hh.workspaceConfig(ws)
		got, err := n.co.Create(hh.ctx, req)
		if err != nil {
			rt.Fatalf("create: %v", err)
		}
		mm := hh.track(got, req, srcCfg)
		mm.takenBy, mm.takenLife = n, n.life
		hh.settleFromStopping(mm, true)
		hh.await()
		if mm.state != store.StateStarting {
			rt.Fatalf("model %s, want starting (a held target)", mm.state)
		}
		h, m = hh, mm
		hh.actRelease(rt) // any of the three releases, drawn
	})
}

// renewing reports whether the calling goroutine is renewing leases.
func renewing() bool {
	buf := make([]byte, 16<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "(*Coordinator).renewLeases")
}

// armedFor finds a pending timer armed for exactly the time asked, and
// neither one for another time nor one that fired or was stopped: the
// harness waits for a node's readiness and generation timeouts by it.
func TestLifeClockArmedFor(t *testing.T) {
	c := &lifeClock{clk: clock.NewFake(start), mu: new(sync.Mutex)}
	at := start.Add(time.Minute)
	if c.armedFor(at) {
		t.Fatal("armed before any timer")
	}
	c.NewTimerAt(at.Add(time.Second))
	c.NewTimer(time.Minute) // relative timers are not counted
	if c.armedFor(at) {
		t.Fatal("a timer for another time counted")
	}
	tm := c.NewTimerAt(at)
	if !c.armedFor(at) {
		t.Fatal("the timer for at not found")
	}
	tm.Stop()
	if c.armedFor(at) {
		t.Fatal("a stopped timer counted")
	}
	c.NewTimerAt(at)
	c.clk.Advance(time.Minute)
	if c.armedFor(at) {
		t.Fatal("a fired timer counted")
	}
}
