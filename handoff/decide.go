package handoff

import (
	"context"
	"strings"

	"github.com/batonhq/baton"
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

// parseAction parses "retry", "skip" or "cancel" (case and surrounding
// space ignored). Errors: ErrInvalidRequest.
func parseAction(s string) (Action, error) {
	switch a := Action(strings.ToLower(strings.TrimSpace(s))); a {
	case Retry, Skip, Cancel:
		return a, nil
	}
	return "", baton.Errorf(ErrInvalidRequest, "unknown action %q (want retry, skip or cancel)", s)
}

// Decide applies a user's decision to a handoff of the workspace.
//
//   - On a completed or cancelled handoff every action returns it unchanged.
//   - Retry and Skip start a new attempt from failed or interrupted; they
//     return ErrTransferRunning in any other pending state, and
//     ErrStopUnconfirmed while a stop was not confirmed.
//   - Cancel behaves as Stop: cancelled when the stop is confirmed (by the
//     process that drives the transfer), failed (reservation kept,
//     StopUnconfirmed set) when it is not.
//
// The action may be written in any case, with surrounding space. Errors:
// ErrInvalidRequest (unknown action), ErrNotFound (unknown handoff
// or another workspace's), ErrClosed, the store's. Safe to retry: a decision
// that already took effect finds the handoff in its new state.
func (c *Coordinator) Decide(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID, action Action) (store.Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return store.Handoff{}, err
	}
	a, err := parseAction(string(action))
	if err != nil {
		return store.Handoff{}, err
	}
	if err := c.live(); err != nil {
		return store.Handoff{}, err
	}
	cur, err := c.Get(ctx, ws, id)
	if err != nil {
		return store.Handoff{}, err
	}
	if cur.State.Terminal() {
		return cur, nil
	}
	if a == Cancel {
		h, _, err := c.cancel(ctx, id)
		return h, err
	}
	trig := triggerRetry
	if a == Skip {
		trig = triggerSkip
	}
	h, f, err := c.apply(ctx, string(id), input{trigger: trig}, func(f *fire) error {
		switch h := f.row; {
		case h.State.Terminal():
			return &unchanged{h: h}
		case h.StopUnconfirmed:
			return ErrStopUnconfirmed
		case h.State != store.StateFailed && h.State != store.StateInterrupted:
			return baton.Errorf(ErrTransferRunning, "state %s", h.State)
		}
		return nil
	})
	if prev, ok := isUnchanged(err); ok {
		return public(prev), nil
	}
	if err != nil {
		return store.Handoff{}, err
	}
	c.startDriver(h, f.owner)
	return public(h), nil
}
