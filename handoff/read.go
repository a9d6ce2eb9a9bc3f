package handoff

import (
	"context"
	"errors"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// Get returns a handoff of a workspace. A handoff of another workspace is
// ErrNotFound, as is an unknown one.
func (c *Coordinator) Get(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (store.Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return store.Handoff{}, err
	}
	h, err := c.load(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && h.Workspace != ws) {
		return store.Handoff{}, baton.Errorf(ErrNotFound, "%s", id)
	}
	if err != nil {
		return store.Handoff{}, err
	}
	return public(h), nil
}

// Current returns the workspace's pending handoff; ok is false when none is
// pending. Errors: session.ErrNoWorkspace, the store's.
func (c *Coordinator) Current(ctx context.Context, ws baton.WorkspaceID) (h store.Handoff, ok bool, err error) {
	if err := checkCtx(ctx); err != nil {
		return store.Handoff{}, false, err
	}
	err = c.store.View(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetWorkspace(tx, ws); err != nil {
			return err
		}
		p, err := tx.PendingHandoffs(ws)
		if err != nil || len(p) == 0 {
			return err
		}
		h, ok = public(p[0]), true
		return nil
	})
	return h, ok, err
}

func (c *Coordinator) load(ctx context.Context, id baton.HandoffID) (h store.Handoff, err error) {
	err = c.store.View(ctx, func(tx store.Tx) error { h, err = tx.GetHandoff(id); return err })
	return h, err
}
