package handoff

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/syncx"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// Shutdown ends the Coordinator gracefully: it refuses new requests, stops
// its drivers, stops the processes it launched for pending transfers, and
// turns every pending transfer it holds the lease of into interrupted
// (token cleared, source restored, report and reservation kept; stop
// unconfirmed only when the stop of its process was not confirmed).
// Nothing is relaunched later on its own: after a restart, Recover (or
// Reconcile), then the user decides. No goroutine of the Coordinator
// outlives Shutdown. Errors: ctx's error if it ended first (the rest is
// then left to Reconcile), the store's.
func (c *Coordinator) Shutdown(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	if err := syncx.Wait(ctx, &c.wg); err != nil {
		return err
	}
	mine, err := c.pendingHeld(ctx, func(r store.Reservation, _ store.Handoff) bool { return c.holds(r) })
	if err != nil {
		return err
	}
	for _, h := range mine {
		out, herr := c.sessions.Halt(ctx, h.Workspace)
		out, herr = c.reapStrays(ctx, h.Workspace, out, herr)
		msg := "interrupted by shutdown"
		if !out.Confirmed() {
			msg += fmt.Sprintf("; the stop was not confirmed (%s%s)", out, errSuffix(herr))
		}
		in := input{trigger: triggerShutdown, confirmed: out.Confirmed(), errMsg: msg}
		if _, _, err := c.apply(ctx, h.ID, in, pendingOnly); err != nil {
			return err
		}
	}
	return c.svc.Close(ctx)
}

// Reconcile turns every pending handoff of a process that is no longer
// running into interrupted (a failed one too), keeping its report and its
// previous error in the history, with its token cleared, its source
// restored and its reservation re-taken by this Coordinator (a new epoch
// fences the dead process). A transfer whose stop had been requested goes
// to failed with its stop unconfirmed instead: nobody can confirm that the
// dead process's engine processes ended. It launches nothing, ever: the
// user then retries, skips or cancels, so a target that had in fact started
// before a crash is never started twice. It returns the handoffs it
// reconciled.
//
// A transfer whose lease another live process holds is left alone (that
// process still drives it) and logged with the time its lease runs until.
// On a store one process holds alone (badgerstore) a lease written before this
// store was opened belongs to a process that is gone and is taken at once;
// on a shared store (PostgreSQL) another process's lease is taken once it
// lapses, so run Reconcile again later, or give a restarted process its
// previous instance id (session.Options.InstanceID). A transfer whose reservation this Coordinator
// took itself, and still holds (it drives it, or keeps it for a decision),
// is left alone as well, so a host on a shared store can run Reconcile
// periodically. Session rows are not touched: see Recover. Last, it
// creates the context-pressure transfers a crash left due and uncreated
// (see "Context pressure" in the package documentation): those start as
// any new transfer does.
// Each launch it reaps is logged at info, or at warn when it could not be
// confirmed gone.
// Errors: the store's (Reconcile may be run again).
func (c *Coordinator) Reconcile(ctx context.Context) ([]store.Handoff, error) {
	if err := c.live(ctx); err != nil {
		return nil, err
	}
	out, err := c.reconcile(ctx, false, nil)
	if err == nil {
		err = c.createDue(ctx)
	}
	return out, err
}

// reconcile is Reconcile. With swept, every live launch of another
// process was just reaped (Recover's first step) and held are those it
// could not confirm gone: a workspace's launches are confirmed gone unless
// held has one of them, and none is reaped again (a reap that did not
// answer would make Recover wait for it twice).
func (c *Coordinator) reconcile(ctx context.Context, swept bool, held []workspace.Reaped) ([]store.Handoff, error) {
	var pend []store.Handoff
	if err := c.store.View(ctx, func(tx store.Tx) (err error) { pend, err = tx.PendingHandoffs(""); return err }); err != nil {
		return nil, err
	}
	var out []store.Handoff
	for _, p := range pend {
		var until time.Time
		leftToLive := func(h store.Handoff) {
			c.log.Info("reconcile left a transfer to the live process that drives it",
				zap.String("handoff", string(h.ID)), zap.String("state", string(h.State)), zap.Time("leaseUntil", until))
		}
		in := input{trigger: triggerReconcile, errMsg: "interrupted by a restart"}
		if p.StopRequested {
			in = input{trigger: triggerCancelUnconfirmed, takeOver: true,
				errMsg: "the stop was not confirmed: the process driving the transfer is gone, so its engine processes may still run; stop again to cancel"}
		}
		// driven says whether a live process drives h: another (its lease
		// is live) or this Coordinator (it took the reservation itself).
		driven := func(tx store.Tx, h store.Handoff) (live, own bool) {
			var l leaseState
			l, until = c.leaseOf(tx, h, c.clock.Now())
			return l == leaseLive, c.tookHere(tx, h)
		}
		var live, own bool
		if err := c.store.View(ctx, func(tx store.Tx) error { live, own = driven(tx, p); return nil }); err != nil {
			return out, err
		}
		if own {
			continue // this Coordinator drives it, or keeps it for a decision
		}
		if live {
			// Another live process drives it. Were its lease to lapse
			// before the change below, the transfer would be settled
			// without its launches reaped (its stop unconfirmed): leave
			// it to a later Reconcile.
			leftToLive(p)
			continue
		}
		// Whatever the dead process launched in the workspace must be
		// confirmed gone, or the transfer keeps its stop unconfirmed.
		var rerr error
		if !swept {
			_, rerr = c.reapStrays(ctx, p.Workspace, engine.NotRunning, nil)
		} else if i := slices.IndexFunc(held, func(r workspace.Reaped) bool { return r.Workspace == p.Workspace }); i >= 0 {
			rerr = mayStillRun(held[i].Launch)
		}
		if in.confirmed = rerr == nil; rerr != nil {
			in.errMsg += "; " + rerr.Error()
		}
		h, f, err := c.apply(ctx, p.ID, in, func(f *fire) error {
			if err := pendingOnly(f); err != nil {
				return err
			}
			if live, own := driven(f.tx, f.row); live || own {
				return &unchanged{h: f.row} // a live process drives it
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		if f == nil {
			if h.State.Pending() {
				leftToLive(h)
			}
			continue
		}
		c.log.Info("handoff reconciled", zap.String("handoff", string(h.ID)), zap.String("was", string(p.State)), zap.String("now", string(h.State)))
		out = append(out, public(h))
	}
	return out, nil
}

// Recovery says what Recover did.
type Recovery struct {
	// EndedSessions counts session rows a crash left running that were
	// marked ended.
	EndedSessions int
	// Handoffs are the transfers Reconcile settled.
	Handoffs []store.Handoff
	// Reaped are the launches earlier processes left live that were
	// confirmed gone, each with its workspace, session and launch id:
	// Outcome engine.Stopped when processes of it were found running and
	// were killed, engine.NotRunning when none ran any more.
	Reaped []Reaped
	// Held are the launches that could not be confirmed gone (their
	// engine's reap failed or timed out, see Err; or it ran on another
	// host): they may still run, so their workspaces stay held (ordinary
	// starts are refused with session.ErrSessionRunning, and a transfer
	// there keeps its stop unconfirmed) until a later Recover or Reconcile
	// confirms them gone.
	Held []Reaped
}

// Reaped is a launch an earlier process left live that Recover dealt
// with: its record (workspace, session, handoff, engine, host, holder,
// the embedded store.Launch) and what the engine answered: Outcome
// engine.Stopped (processes of the launch were found running and were
// killed), engine.NotRunning (none ran any more), engine.Timeout or
// engine.Failed (not confirmed gone, Err says why; nil when it was).
type Reaped struct {
	store.Launch
	Outcome engine.StopOutcome
	Err     error
}

// reapedOf copies the supervisor's reap records into the public type,
// never nil.
func reapedOf(rs []workspace.Reaped) []Reaped {
	out := make([]Reaped, 0, len(rs))
	for _, r := range rs {
		out = append(out, Reaped{Launch: r.Launch, Outcome: r.Outcome, Err: r.Err})
	}
	return out
}

// Recover is the one restart call of a process that serves its store
// alone (an embedded store, or the only process on a shared one): run it
// once, before serving. It reaps every launch an earlier process left live
// and ends the session rows a crash left running
// (no process of this new process runs them),
// then reconciles the transfers (Reconcile), and says what it did: the
// launches it found running and killed, those it could not confirm gone,
// the rows it ended and the transfers it settled. Each launch is logged
// at info (at warn when it could not be confirmed gone), and the totals at
// info. It launches nothing of what the crash cut; like Reconcile, it
// creates the context-pressure transfers the crash left due.
//
// Hosts with several processes on one store must not end other processes'
// session rows: they call Reconcile alone, and end a dead process's rows
// once they know it is gone. Errors: the store's; safe to run again (a
// launch left held is tried again).
func (c *Coordinator) Recover(ctx context.Context) (Recovery, error) {
	if err := c.live(ctx); err != nil {
		return Recovery{}, err
	}
	rec, ended, err := c.sessions.Reconcile(ctx)
	out := Recovery{EndedSessions: ended, Reaped: reapedOf(rec.Gone), Held: reapedOf(rec.Unconfirmed)}
	if err == nil {
		out.Handoffs, err = c.reconcile(ctx, true, rec.Unconfirmed)
	}
	if err == nil {
		err = c.createDue(ctx)
	}
	if err != nil {
		return out, err
	}
	killed := 0
	for _, r := range out.Reaped {
		if r.Outcome == engine.Stopped {
			killed++
		}
	}
	c.log.Info("recovered", zap.Int("launchesKilled", killed), zap.Int("launchesGone", len(out.Reaped)-killed),
		zap.Int("launchesHeld", len(out.Held)), zap.Int("sessionsEnded", out.EndedSessions), zap.Int("handoffs", len(out.Handoffs)))
	return out, nil
}

// pendingOnly leaves a settled handoff unchanged.
func pendingOnly(f *fire) error {
	if !f.row.State.Pending() {
		return &unchanged{h: f.row}
	}
	return nil
}

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
