package handoff

import (
	"context"
	"errors"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Get returns a handoff of a workspace. A handoff of another workspace is
// ErrNotFound, as is an unknown one.
func (c *Coordinator) Get(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return Handoff{}, err
	}
	h, err := c.load(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && h.Workspace != ws) {
		return Handoff{}, baton.Errorf(ErrNotFound, "%s", id)
	}
	if err != nil {
		return Handoff{}, err
	}
	return public(h), nil
}

// Current returns the workspace's pending handoff; ok is false when none is
// pending. Errors: ErrWorkspaceNotFound, the store's.
func (c *Coordinator) Current(ctx context.Context, ws baton.WorkspaceID) (h Handoff, ok bool, err error) {
	if err := checkCtx(ctx); err != nil {
		return Handoff{}, false, err
	}
	err = c.store.View(ctx, func(tx store.Tx) error {
		if _, err := session.GetWorkspace(tx, ws); err != nil {
			return err
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
// while a transfer holds the reservation; ErrWorkspaceNotFound.
func (c *Coordinator) AssertWritable(ctx context.Context, ws baton.WorkspaceID, owner session.Owner) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	return c.sessions.AssertWritable(ctx, ws, owner)
}

func (c *Coordinator) load(ctx context.Context, id baton.HandoffID) (h store.Handoff, err error) {
	err = c.store.View(ctx, func(tx store.Tx) error { h, err = tx.GetHandoff(id); return err })
	return h, err
}
