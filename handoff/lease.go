package handoff

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/session"
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

// lease is the runtime lease this Coordinator takes at now.
func (c *Coordinator) lease(now time.Time) session.Lease {
	return session.Lease{Holder: c.id, Store: c.incarnation, Expires: now.Add(c.leaseTTL)}
}

// renewLeases extends every lease this Coordinator holds to now+TTL and
// returns how many it renewed. It costs O(pending handoffs).
func (c *Coordinator) renewLeases(ctx context.Context) (int, error) {
	n := 0
	err := c.store.Update(ctx, func(tx store.Tx) error {
		n = 0
		pend, err := tx.ListPendingHandoffs()
		if err != nil {
			return err
		}
		now := c.clock.Now()
		for _, h := range pend {
			r, err := tx.GetReservation(h.Workspace)
			if err != nil || !r.Held || r.Handoff != h.ID || !c.holds(r) {
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
// returns until when a live lease runs. On a store.Exclusive store a lease
// written under another incarnation belongs to a process that is no longer
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
