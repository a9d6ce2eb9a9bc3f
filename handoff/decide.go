package handoff

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff/internal/mutant"
	"github.com/batonhq/baton/internal/syncx"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Action is a user's decision on a handoff.
type Action string

const (
	// Retry starts a new attempt, keeping a stored report (a retry with a
	// report goes straight to a new target).
	Retry Action = "retry"
	// Skip starts a new attempt without a summary, dropping the report.
	Skip Action = "skip"
	// Cancel stops whatever runs and abandons the transfer, restoring the
	// source.
	Cancel Action = "cancel"
)

// ParseAction parses "retry", "skip" or "cancel" (case and surrounding
// space ignored). Errors: ErrInvalidRequest.
func ParseAction(s string) (Action, error) {
	switch a := Action(strings.ToLower(strings.TrimSpace(s))); a {
	case Retry, Skip, Cancel:
		return a, nil
	}
	return "", baton.Errorf(ErrInvalidRequest, "unknown action %q (want retry, skip or cancel)", s)
}

// Get returns a handoff of a workspace. A handoff of another workspace is
// ErrNotFound, as is an unknown one.
func (c *Coordinator) Get(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return Handoff{}, err
	}
	h, err := c.load(ctx, id)
	if err != nil || h.Workspace != ws {
		return Handoff{}, baton.Errorf(ErrNotFound, "%s", id)
	}
	return public(h), nil
}

// Current returns the workspace's pending handoff; ok is false when none is
// pending. Errors: ErrNotFound (workspace), the store's.
func (c *Coordinator) Current(ctx context.Context, ws baton.WorkspaceID) (h Handoff, ok bool, err error) {
	if err := checkCtx(ctx); err != nil {
		return Handoff{}, false, err
	}
	err = c.store.View(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(ws); err != nil {
			return baton.Errorf(ErrNotFound, "workspace %s", ws)
		}
		p, err := tx.PendingHandoff(ws)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		h, ok = public(p), true
		return nil
	})
	return h, ok, err
}

// AssertWritable returns nil when a launch, message, review or automatic
// writer may act in the workspace with owner (the zero Owner for everyone
// but the SDK's own launches); ErrWorkspaceBusy (or session.ErrStaleEpoch)
// while a transfer holds the reservation.
func (c *Coordinator) AssertWritable(ctx context.Context, ws baton.WorkspaceID, owner session.Owner) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	return c.sessions.AssertWritable(ctx, ws, owner)
}

// Decide applies a user's decision to a handoff of the workspace.
//
//   - On a completed or cancelled handoff every action returns it unchanged.
//   - Retry and Skip start a new attempt from failed or interrupted; they
//     return ErrTransferRunning in any other pending state, and
//     ErrStopUnconfirmed while a stop was not confirmed.
//   - Cancel behaves as Stop: cancelled when the stop is confirmed, failed
//     (reservation kept, StopUnconfirmed set) when it is not.
//
// Errors: ErrInvalidRequest (unknown action), ErrNotFound (unknown handoff
// or another workspace's), ErrClosed, the store's. Safe to retry: a decision
// that already took effect finds the handoff in its new state.
func (c *Coordinator) Decide(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID, action Action) (Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return Handoff{}, err
	}
	a, err := ParseAction(string(action))
	if err != nil {
		return Handoff{}, err
	}
	if err := c.live(); err != nil {
		return Handoff{}, err
	}
	cur, err := c.Get(ctx, ws, id)
	if err != nil {
		return Handoff{}, err
	}
	if cur.State.Terminal() {
		return cur, nil
	}
	if a == Cancel {
		h, _, err := c.cancel(ctx, id)
		return h, err
	}
	trig := TriggerRetry
	if a == Skip {
		trig = TriggerSkip
	}
	h, f, err := c.apply(ctx, string(id), input{trigger: trig}, func(_ store.Tx, h store.Handoff) error {
		switch {
		case h.State.Terminal():
			return &replayed{h: h}
		case h.StopUnconfirmed:
			return ErrStopUnconfirmed
		case h.State != store.StateFailed && h.State != store.StateInterrupted:
			return baton.Errorf(ErrTransferRunning, "state %s", h.State)
		}
		return nil
	})
	var rep *replayed
	if errors.As(err, &rep) {
		return public(rep.h), nil
	}
	if err != nil {
		return Handoff{}, err
	}
	c.startDriver(h, f.owner)
	return public(h), nil
}

// Stop stops the workspace: with a pending handoff it cancels it (see
// Decide's Cancel) and returns the stop outcome; without one it stops the
// ordinary session running there, if the workspace is not reserved.
// Errors: ErrNotFound (workspace), ErrClosed, the store's and the engine's.
func (c *Coordinator) Stop(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error) {
	if err := checkCtx(ctx); err != nil {
		return "", err
	}
	if err := c.live(); err != nil {
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

// cancel: mark the stop requested (no engine callback of the attempt is
// applied from then on and no launch starts), stop what runs, then settle.
// It returns the handoff and the stop's outcome.
func (c *Coordinator) cancel(ctx context.Context, id baton.HandoffID) (Handoff, engine.StopOutcome, error) {
	var ws baton.WorkspaceID
	err := c.store.Update(ctx, func(tx store.Tx) error {
		h, err := tx.GetHandoff(id)
		if err != nil {
			return notFound(err)
		}
		ws = h.Workspace
		if h.State.Terminal() || h.StopRequested {
			return nil
		}
		h.StopRequested, h.UpdatedAt = true, c.clock.Now()
		return tx.PutHandoff(h)
	})
	if err != nil {
		return Handoff{}, "", err
	}
	c.cancelDriver(id)
	out, herr := c.sessions.Halt(ctx, ws)
	in := input{trigger: TriggerCancel, confirmed: true}
	if !out.Confirmed() && !c.bugs.Has(mutant.UnconfirmedStopIsStop) {
		in = input{trigger: TriggerCancelUnconfirmed, errMsg: fmt.Sprintf("the stop was not confirmed (%s%s); stop again", out, errSuffix(herr))}
	}
	h, _, err := c.apply(ctx, string(id), in, func(_ store.Tx, h store.Handoff) error {
		if h.State.Terminal() {
			return &replayed{h: h}
		}
		return nil
	})
	var rep *replayed
	if errors.As(err, &rep) {
		return public(rep.h), out, nil
	}
	if err != nil {
		return Handoff{}, "", err
	}
	return public(h), out, nil
}

// Shutdown ends the Coordinator gracefully: it refuses new requests, stops
// its drivers, stops the processes it launched for pending transfers, and
// turns every pending transfer it holds the lease of into interrupted
// (token cleared, source restored, report and reservation kept). Nothing is
// relaunched later on its own: after a restart, Reconcile, then the user
// decides. No goroutine of the Coordinator outlives Shutdown. Errors: ctx's
// error if it ended first (the rest is then left to Reconcile), the store's.
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
	var mine []store.Handoff
	err := c.store.View(ctx, func(tx store.Tx) error {
		all, err := tx.ListPendingHandoffs()
		for _, h := range all {
			r, rerr := tx.GetReservation(h.Workspace)
			if rerr == nil && r.LeaseHolder == c.id {
				mine = append(mine, h)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	for _, h := range mine {
		out, herr := c.sessions.Halt(ctx, h.Workspace)
		msg := "interrupted by shutdown"
		if !out.Confirmed() {
			msg += fmt.Sprintf("; the stop was not confirmed (%s%s)", out, errSuffix(herr))
		}
		if _, _, err := c.apply(ctx, string(h.ID), input{trigger: TriggerShutdown, confirmed: out.Confirmed(), errMsg: msg}, pendingOnly); err != nil && !isSkip(err) {
			return err
		}
	}
	return c.sessions.Close(ctx)
}

// Reconcile is run once at start: every pending handoff becomes
// interrupted (a failed one too), keeping its report and its previous error
// in the history, with its token cleared, its source restored and its
// reservation re-taken by this Coordinator. It launches nothing, ever: the
// user then retries, skips or cancels, so a target that had in fact started
// before a crash is never started twice. It returns the handoffs it
// reconciled. A transfer whose reservation lease is held by another
// process and has not lapsed is left alone: that process still drives it.
// (Session rows a crash left running are the session service's to
// reconcile: see session.Service.Reconcile.)
// Errors: the store's (Reconcile may be run again).
func (c *Coordinator) Reconcile(ctx context.Context) ([]Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := c.live(); err != nil {
		return nil, err
	}
	var pend []store.Handoff
	if err := c.store.View(ctx, func(tx store.Tx) (err error) { pend, err = tx.ListPendingHandoffs(); return err }); err != nil {
		return nil, err
	}
	var out []Handoff
	for _, p := range pend {
		h, _, err := c.apply(ctx, string(p.ID), input{trigger: TriggerReconcile, errMsg: "interrupted by a restart"}, func(tx store.Tx, h store.Handoff) error {
			if err := pendingOnly(tx, h); err != nil {
				return err
			}
			if c.leasedElsewhere(tx, h, c.clock.Now()) {
				return &replayed{h: h} // another live process drives it
			}
			return nil
		})
		if isSkip(err) {
			continue
		}
		if err != nil {
			return out, err
		}
		c.log.Info("handoff reconciled", zap.String("handoff", string(h.ID)), zap.String("was", string(p.State)))
		pub := public(h)
		if c.bugs.Has(mutant.ReconcileRelaunches) {
			if r, err := c.Decide(ctx, h.Workspace, h.ID, Retry); err == nil {
				pub = r
			}
		}
		out = append(out, pub)
	}
	return out, nil
}

func pendingOnly(_ store.Tx, h store.Handoff) error {
	if !h.State.Pending() {
		return &replayed{h: h}
	}
	return nil
}

func isSkip(err error) bool {
	var rep *replayed
	return errors.As(err, &rep)
}
