package handoff

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/store"
)

// renewLoop renews, every third of the lease TTL, the runtime leases of the
// reservations this Coordinator holds, until Shutdown. A process that dies
// stops renewing; once its leases lapse, another process's Reconcile
// interrupts its transfers (and never replays them).
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
	}
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
			if err != nil || !r.Held || r.Handoff != h.ID || r.LeaseHolder != c.id {
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

// leasedElsewhere reports whether another process holds a live lease on the
// reservation of handoff h.
func (c *Coordinator) leasedElsewhere(tx store.Tx, h store.Handoff, now time.Time) bool {
	r, err := tx.GetReservation(h.Workspace)
	if err != nil || !r.Held || r.Handoff != h.ID {
		return false
	}
	return r.LeaseHolder != "" && r.LeaseHolder != c.id && r.LeaseExpires.After(now)
}
