package handoff

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Create requests a session transfer and returns the handoff as committed.
// The source's engine is stopped after the row is written; the rest of the
// transfer runs in the background (see Get, Current, Watch, Wait).
//
// Replaying a request id with the same fingerprint returns the existing
// handoff as it is now, in any state, with no side effect: Create is safe to
// retry. Errors (nothing is stopped or reserved on any of them):
// ErrInvalidRequest (malformed; also matches engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig for a target the engines do not offer),
// session.ErrNoWorkspace, ErrIdempotencyMismatch, session.ErrArchived,
// ErrTransferPending, ErrSourceChanged, ErrNativeUnsupported (Native asked
// and the target engine cannot carry the source's session), ErrClosed, and
// the store's errors.
func (c *Coordinator) Create(ctx context.Context, req Request) (store.Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return store.Handoff{}, err
	}
	if err := c.live(); err != nil {
		return store.Handoff{}, err
	}
	req = req.normalized()
	if err := req.validate(); err != nil {
		return store.Handoff{}, err
	}
	in := input{trigger: triggerCreate, req: req, id: ids.New("hof"), fp: req.fingerprint()}
	h, f, err := c.apply(ctx, "", in, c.createCheck(req, in.fp))
	if errors.Is(err, store.ErrDuplicate) {
		// A concurrent Create won the race for the request id or the
		// pending slot; run the checks again to answer as it would have.
		h, f, err = c.apply(ctx, "", in, c.createCheck(req, in.fp))
	}
	if prev, ok := isUnchanged(err); ok {
		return public(prev), nil
	}
	if err != nil {
		return store.Handoff{}, err
	}
	c.startDriver(h, f.owner)
	return public(h), nil
}

// createCheck applies Create's guards in the order that makes an exact
// replay succeed whatever has changed since.
func (c *Coordinator) createCheck(req Request, fp string) func(*fire) error {
	return func(f *fire) error {
		tx := f.tx
		ws, err := workspace.GetWorkspace(tx, req.Workspace)
		if err != nil {
			return err
		}
		prev, err := tx.HandoffByRequest(req.Workspace, req.RequestID)
		switch {
		case err == nil && prev.Fingerprint == fp:
			return &unchanged{h: prev}
		case err == nil:
			return baton.Errorf(ErrIdempotencyMismatch, "request id %q", req.RequestID)
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		if ws.Archived {
			return session.ErrArchived
		}
		if p, err := tx.PendingHandoffs(req.Workspace); err != nil {
			return err
		} else if len(p) > 0 {
			return baton.Errorf(ErrTransferPending, "handoff %s is %s", p[0].ID, p[0].State)
		}
		if req.SourceSession != ws.CurrentSession {
			return baton.Errorf(ErrSourceChanged, "current session is %q", ws.CurrentSession)
		}
		if err := workspace.CheckConfig(c.engines, req.Target); err != nil {
			return fmt.Errorf("%w: target: %w", ErrInvalidRequest, err)
		}
		if req.Native {
			return c.nativeCheck(tx, ws, req)
		}
		return nil
	}
}

// nativeCheck refuses a native-path request the target engine cannot
// carry: never a silent fallback to a briefed fresh session.
func (c *Coordinator) nativeCheck(tx store.Tx, ws store.Workspace, req Request) error {
	if req.SourceSession == "" {
		return baton.Errorf(ErrNativeUnsupported, "the workspace has no source session to carry")
	}
	src, err := tx.GetSession(req.SourceSession)
	if err != nil {
		return err
	}
	if src.NativeID == "" {
		return baton.Errorf(ErrNativeUnsupported, "source session %s has no native id", src.ID)
	}
	e, _ := c.engines.Lookup(req.Target.Engine)
	r, ok := e.(engine.Reconfigurer)
	if !ok || !src.Config.SameAccount(req.Target) || !r.CanReconfigure(src.Config, req.Target) {
		return baton.Errorf(ErrNativeUnsupported, "engine %q cannot resume a session of %s/%s under %s/%s",
			req.Target.Engine, src.Config.Engine, src.Config.Model, req.Target.Engine, req.Target.Model)
	}
	return nil
}
