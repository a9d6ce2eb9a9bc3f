package handoff

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/store"
)

// renewLoop renews, every third of the lease TTL, the runtime leases of the
// reservations this Coordinator holds, and carries out the stops other
// processes requested of the transfers it holds (those it drives are
// followed at once: see follow). It runs until Shutdown. A process
// that dies stops renewing; once its leases lapse, another process's
// Reconcile interrupts its transfers (and never replays them).
func (c *Coordinator) renewLoop() {
	defer c.wg.Done()
	every := c.leaseTTL / 3
	for {
		t := c.clock.NewTimer(every)
		select {
		case <-c.root.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if _, err := c.renewLeases(c.root); err != nil && c.root.Err() == nil {
			c.log.Warn("lease renewal failed", zap.Error(err))
		}
		c.serveStops(c.root)
	}
}

// renewLeases extends every lease this Coordinator holds to now+TTL and
// returns how many it renewed. It costs O(pending handoffs). The leases
// are found in a View, and renewed in one Update that touches only the
// workspaces this Coordinator holds, in the order of their ids: on a
// store that locks by workspace (store/pgstore) it never waits for the
// transitions of another process's workspaces (nor for a process frozen
// in one), and takes its locks in one fixed order.
func (c *Coordinator) renewLeases(ctx context.Context) (int, error) {
	mine, err := c.pendingHeld(ctx, c.renews)
	if err != nil || len(mine) == 0 {
		return 0, err
	}
	slices.SortFunc(mine, func(a, b store.Handoff) int { return strings.Compare(string(a.Workspace), string(b.Workspace)) })
	n := 0
	err = c.store.Update(ctx, func(tx store.Tx) error {
		n = 0
		now := c.clock.Now()
		for _, h := range mine {
			r, err := tx.GetReservation(h.Workspace)
			if err != nil || !c.renews(r, h) {
				continue
			}
			r.LeaseExpires, r.UpdatedAt = now.Add(c.leaseTTL), now
			if err := tx.PutReservation(r); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

// pendingHeld returns the pending handoffs whose reservation keep accepts.
func (c *Coordinator) pendingHeld(ctx context.Context, keep func(store.Reservation, store.Handoff) bool) ([]store.Handoff, error) {
	var mine []store.Handoff
	err := c.store.View(ctx, func(tx store.Tx) error {
		mine = mine[:0]
		pend, err := tx.PendingHandoffs("")
		for _, h := range pend {
			if r, rerr := tx.GetReservation(h.Workspace); rerr == nil && keep(r, h) {
				mine = append(mine, h)
			}
		}
		return err
	})
	return mine, err
}

// renews reports whether r, the reservation of h's workspace, holds a
// lease of this Coordinator for h.
func (c *Coordinator) renews(r store.Reservation, h store.Handoff) bool {
	return r.Held && r.Handoff == h.ID && c.holds(r)
}

// holds reports whether this Coordinator holds r's lease.
func (c *Coordinator) holds(r store.Reservation) bool {
	return r.LeaseHolder == c.id && r.LeaseStore == c.incarnation
}

// leaseState says who drives a pending handoff, as its reservation says.
type leaseState int

const (
	leaseMine leaseState = iota // this Coordinator holds it (or nobody holds it)
	leaseLive                   // another live process holds it
	leaseDead                   // another process held it and is gone
)

// leaseOf classifies the lease on handoff h's reservation at now, and
// returns until when a live lease runs. On an exclusive store (badgerstore:
// see package store's doc) a lease written under another incarnation belongs to a process that is no longer
// running, however long it had left.
func (c *Coordinator) leaseOf(tx store.Tx, h store.Handoff, now time.Time) (leaseState, time.Time) {
	r, err := tx.GetReservation(h.Workspace)
	switch {
	case err != nil || !r.Held || r.Handoff != h.ID || r.LeaseHolder == "" || c.holds(r):
		return leaseMine, time.Time{}
	case c.incarnation != "" && r.LeaseStore != c.incarnation:
		return leaseDead, r.LeaseExpires
	case r.LeaseExpires.After(now):
		return leaseLive, r.LeaseExpires
	}
	return leaseDead, r.LeaseExpires
}
