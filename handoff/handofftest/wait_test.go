package handofftest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton/store"
)

// holdingStore holds the first Update that comes once hold is set, until
// release is closed: a node's goroutine caught in the middle of its work.
type holdingStore struct {
	store.Store
	hold             *atomic.Bool
	entered, release chan struct{}
}

func (s holdingStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if s.hold.CompareAndSwap(true, false) {
		s.entered <- struct{}{}
		<-s.release
	}
	return s.Store.Update(ctx, fn)
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
