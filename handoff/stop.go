package handoff

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// Stop stops the workspace: with a pending handoff it cancels it (see
// Decide's Cancel) and returns the stop's outcome; without one it stops the
// ordinary session this process runs there. It is the one way to stop a
// workspace a Coordinator serves: session.Service.Stop refuses a workspace
// a transfer holds (session.ErrWorkspaceBusy), and Decide(Cancel) is the
// same stop aimed at one transfer by id, which leaves the workspace's
// session alone once that transfer has ended.
//
// A stop is confirmed only by the process that drives the transfer (holds
// its reservation's lease), since only that process knows the engine
// processes it launched. Stop sent to another process records the request
// on the handoff (StopRequested); the driving process learns of it through
// the store (at once with a store.Notifier, else at its next lease
// renewal), stops, and settles the handoff; this call waits for that
// within ctx and answers engine.Timeout if ctx ends first (the request
// stands). If the driving process's lease lapses first, the transfer goes
// to failed with its stop unconfirmed and the user decides.
//
// Errors: session.ErrNoWorkspace, session.ErrClosed, the store's and the engine's.
func (c *Coordinator) Stop(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error) {
	if err := c.live(ctx); err != nil {
		return "", err
	}
	h, ok, err := c.Current(ctx, ws)
	if err != nil {
		return "", err
	}
	if !ok {
		return c.sessions.Halt(ctx, ws)
	}
	_, out, err := c.cancel(ctx, h.ID)
	return out, err
}

// cancel marks the stop requested (no engine callback of the attempt is
// applied from then on and no launch starts), then carries it out here when
// this process drives the transfer, or waits for the process that does.
func (c *Coordinator) cancel(ctx context.Context, id baton.HandoffID) (store.Handoff, engine.StopOutcome, error) {
	var (
		row   store.Handoff
		lease leaseState
		until time.Time
		seq   int64 // the feed's position once the request is recorded
	)
	err := c.store.Update(ctx, func(tx store.Tx) error {
		h, err := tx.GetHandoff(id)
		if err != nil {
			return notFound(err)
		}
		row = h
		if h.State.Terminal() {
			return nil
		}
		now := c.clock.Now()
		lease, until = c.leaseOf(tx, h, now)
		if seq, err = tx.LastSeq(h.Workspace); err != nil {
			return err
		}
		if h.StopRequested {
			return nil
		}
		h.StopRequested, h.UpdatedAt = true, now
		row = h
		seq++ // the request's own change
		return tx.PutHandoff(h)
	})
	switch {
	case err != nil:
		return store.Handoff{}, "", err
	case row.State.Terminal():
		return public(row), engine.NotRunning, nil
	case lease == leaseDead:
		return c.stopOrphaned(ctx, id, until)
	case lease == leaseLive:
		return c.awaitStop(ctx, row, seq)
	}
	if !c.claimStop(id) {
		// This process's stop loop is carrying it out already.
		return c.awaitStop(ctx, row, seq)
	}
	defer c.releaseStop(id)
	return c.finishStop(ctx, id)
}

// claimStop marks a stop as being carried out by this process; false when
// it already is. A claim refused is remembered: the holder may have read
// the handoff before the request that asked for it (a stop requested again
// once the last one was carried out unconfirmed), so releaseStop looks
// again.
func (c *Coordinator) claimStop(id baton.HandoffID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, held := c.stopping[id]; held {
		c.stopping[id] = true
		return false
	}
	c.stopping[id] = false
	return true
}

// releaseStop ends a claim. When a claim was refused meanwhile, the
// request that asked for it may still stand, with nobody to carry it out:
// the process that requested it waits, and nothing else would look before
// the next lease renewal. So it looks once more, in the background.
func (c *Coordinator) releaseStop(id baton.HandoffID) {
	c.mu.Lock()
	again := c.stopping[id]
	delete(c.stopping, id)
	c.mu.Unlock()
	if again {
		c.background(func() {
			if h, err := c.load(c.root, id); err == nil {
				c.serveRequested(c.root, h)
			}
		})
	}
}

// background runs fn in a goroutine Shutdown waits for; false (fn is not
// run) once the Coordinator is shut down.
func (c *Coordinator) background(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// serveRequested carries out, in the background, the stop requested of h
// (as just read), when this process holds its reservation's lease.
func (c *Coordinator) serveRequested(ctx context.Context, h store.Handoff) {
	if !h.StopRequested || !h.State.Pending() {
		return
	}
	var r store.Reservation
	err := c.store.View(ctx, func(tx store.Tx) (err error) { r, err = tx.GetReservation(h.Workspace); return err })
	if err != nil || !r.Held || r.Handoff != h.ID || !c.holds(r) {
		return // another process holds it now: it carries the stop out
	}
	c.serveStop(h.ID, false, time.Time{})
}

// finishStop carries out a requested stop in the process that drives the
// transfer: its driver is cancelled, what runs in the workspace is stopped,
// and the handoff is cancelled when the stop is confirmed, failed with its
// stop unconfirmed otherwise.
//
// It must be called holding the stop's claim (claimStop). A request the
// previous holder of the claim answered meanwhile (a concurrent Stop that
// found it recorded, a background stop that read the row before) is not
// carried out again: halting the workspace again would stop whatever runs
// there now, the next transfer's target included. Its answer is returned.
func (c *Coordinator) finishStop(ctx context.Context, id baton.HandoffID) (store.Handoff, engine.StopOutcome, error) {
	h, err := c.load(ctx, id)
	if err != nil {
		return store.Handoff{}, "", notFound(err)
	}
	if !h.StopRequested || !h.State.Pending() {
		return public(h), stopAnswer(h), nil
	}
	c.mu.Lock()
	if d, ok := c.drivers[id]; ok {
		d.cancel() // stopped without waiting
	}
	c.mu.Unlock()
	out, herr := c.sessions.Halt(ctx, h.Workspace)
	out, herr = c.reapStrays(ctx, h.Workspace, out, herr)
	in := input{trigger: triggerCancel, confirmed: true}
	if !out.Confirmed() {
		in = input{trigger: triggerCancelUnconfirmed, errMsg: fmt.Sprintf("the stop was not confirmed (%s%s); stop again", out, errSuffix(herr))}
	}
	settledRow, _, err := c.apply(ctx, id, in, pendingOnly)
	if err != nil {
		return store.Handoff{}, "", err
	}
	return public(settledRow), out, nil
}

// stopOrphaned settles a stop requested of a transfer whose driving process
// is gone (its lease lapsed, or it ran under an earlier opening of an
// exclusive store): nobody can confirm that its engine processes ended, so
// the transfer goes to failed with its stop unconfirmed, and this process
// takes the reservation over (a new epoch fences the dead one).
func (c *Coordinator) stopOrphaned(ctx context.Context, id baton.HandoffID, lapsed time.Time) (store.Handoff, engine.StopOutcome, error) {
	msg := "the stop was not confirmed: the process driving the transfer is gone (its lease ran until " +
		lapsed.UTC().Format(time.RFC3339) + "), so its engine processes may still run; stop again to cancel"
	h, f, err := c.apply(ctx, id, input{trigger: triggerCancelUnconfirmed, errMsg: msg, takeOver: true}, pendingOnly)
	switch {
	case err != nil:
		return store.Handoff{}, "", err
	case f == nil:
		return public(h), engine.NotRunning, nil
	}
	return public(h), engine.Timeout, nil
}

// awaitStop waits until the process driving the transfer has settled the
// stop requested of it: the first change of the handoff after after (the
// feed's position once the request was recorded). If that process's lease
// lapses meanwhile, the stop is settled as orphaned; if ctx ends first, the
// answer is engine.Timeout and the request stands.
func (c *Coordinator) awaitStop(ctx context.Context, h store.Handoff, after int64) (store.Handoff, engine.StopOutcome, error) {
	w := c.waiter(h.Workspace)
	defer w.cancel()
	for {
		var (
			found *store.Handoff
			lease leaseState
			until time.Time
		)
		err := c.store.View(ctx, func(tx store.Tx) error {
			found = nil
			changes, err := tx.Changes(h.Workspace, after, 0)
			if err != nil {
				return err
			}
			for _, ch := range changes {
				after = ch.Seq
				if ch.Handoff != nil && ch.Handoff.ID == h.ID && found == nil {
					found = ch.Handoff
				}
			}
			cur, err := tx.GetHandoff(h.ID)
			if err != nil {
				return err
			}
			lease, until = c.leaseOf(tx, cur, c.clock.Now())
			return nil
		})
		switch {
		case err != nil && ctx.Err() != nil:
			return c.stopTimedOut(ctx, h.ID)
		case err != nil:
			return store.Handoff{}, "", err
		case found != nil:
			return public(*found), stopAnswer(*found), nil
		case lease == leaseDead:
			return c.stopOrphaned(ctx, h.ID, until)
		case lease == leaseMine && c.claimStop(h.ID):
			// The reservation came to this process (a Reconcile here
			// took it over): carry the stop out here.
			defer c.releaseStop(h.ID)
			return c.finishStop(ctx, h.ID)
		}
		if !w.wait(ctx, until) {
			return c.stopTimedOut(ctx, h.ID)
		}
	}
}

// stopAnswer is the outcome a stop request got, read from the handoff
// once the request was settled: engine.Stopped when it was cancelled,
// engine.NotRunning when it ended otherwise, engine.Timeout when it is
// still pending (failed with its stop unconfirmed).
func stopAnswer(h store.Handoff) engine.StopOutcome {
	switch {
	case h.State == store.StateCancelled:
		return engine.Stopped
	case h.State.Terminal():
		return engine.NotRunning
	}
	return engine.Timeout
}

// stopTimedOut answers a Stop whose confirmation did not come within its
// context: the handoff as it is, engine.Timeout.
func (c *Coordinator) stopTimedOut(ctx context.Context, id baton.HandoffID) (store.Handoff, engine.StopOutcome, error) {
	cur, err := c.load(context.WithoutCancel(ctx), id)
	if err != nil {
		return store.Handoff{}, "", notFound(err)
	}
	return public(cur), engine.Timeout, nil
}

// serveStops carries out, in the background, the stops other processes
// requested of transfers this Coordinator holds the lease of (waiting for a
// decision, or driven), and settles those whose driving process is gone.
// It costs O(pending handoffs) and runs at each lease renewal; a transfer
// taken here is followed at once by follow.
func (c *Coordinator) serveStops(ctx context.Context) {
	var jobs []func()
	err := c.store.View(ctx, func(tx store.Tx) error {
		jobs = jobs[:0]
		pend, err := tx.PendingHandoffs("")
		now := c.clock.Now()
		for _, h := range pend {
			if !h.StopRequested {
				continue
			}
			switch l, until := c.leaseOf(tx, h, now); l {
			case leaseMine:
				if r, err := tx.GetReservation(h.Workspace); err == nil && c.holds(r) {
					jobs = append(jobs, func() { c.serveStop(h.ID, false, time.Time{}) })
				}
			case leaseDead:
				jobs = append(jobs, func() { c.serveStop(h.ID, true, until) })
			}
		}
		return err
	})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("reading requested stops failed", zap.Error(err))
		}
		return
	}
	for _, serve := range jobs {
		serve()
	}
}

// serveStop carries out, in the background, a stop requested of handoff id
// (settled as orphaned when its driving process is dead), unless this
// process is carrying it out already.
func (c *Coordinator) serveStop(id baton.HandoffID, dead bool, until time.Time) {
	if !c.claimStop(id) {
		return
	}
	started := c.background(func() {
		defer c.releaseStop(id)
		ctx := c.root
		var err error
		if dead {
			// The row was read before the claim: the holder of the claim
			// (a Stop call in this process) may have carried the request
			// out meanwhile, and it must not be carried out again (see
			// finishStop).
			if h, err := c.load(ctx, id); err != nil || !h.StopRequested || !h.State.Pending() {
				return
			}
			_, _, err = c.stopOrphaned(ctx, id, until)
		} else {
			_, _, err = c.finishStop(ctx, id)
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrNotFound) {
			c.log.Warn("carrying out a requested stop failed", zap.String("handoff", string(id)), zap.Error(err))
		}
	})
	if !started {
		c.releaseStop(id)
	}
}
