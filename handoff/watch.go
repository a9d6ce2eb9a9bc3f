package handoff

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// watchPage is how many changes Watch reads per store transaction.
const watchPage = 256

// Watch yields the workspace's changes (store.Change: a handoff, its public
// view with no token material; a session; or a queued instruction, as a
// committed transaction left it) with Seq > after, first those
// already committed (read from the store), then each new commit's, until
// ctx ends, when the iteration simply stops. It follows commits of every
// process sharing the store: at once with a store.Notifier (PostgreSQL's
// LISTEN/NOTIFY carries them across machines), else by reading the store
// every poll interval (Timeouts.Poll). An error (session.ErrNoWorkspace,
// the store's) is yielded once and ends the iteration. Breaking out of the
// loop releases everything Watch holds. Resume a Watch after the last Seq
// seen (an SSE Last-Event-ID).
func (c *Coordinator) Watch(ctx context.Context, ws baton.WorkspaceID, after int64) iter.Seq2[store.Change, error] {
	return func(yield func(store.Change, error) bool) {
		if err := checkCtx(ctx); err != nil {
			yield(store.Change{}, err)
			return
		}
		w := c.waiter(ws)
		defer w.cancel()
		for {
			var page []store.Change
			err := c.store.View(ctx, func(tx store.Tx) (err error) {
				if _, err := workspace.GetWorkspace(tx, ws); err != nil {
					return err
				}
				page, err = tx.Changes(ws, after, watchPage)
				return err
			})
			if err != nil {
				if ctx.Err() == nil {
					yield(store.Change{}, err)
				}
				return
			}
			for _, ch := range page {
				after = ch.Seq
				if ch.Handoff != nil {
					h := public(*ch.Handoff)
					ch.Handoff = &h
				}
				if !yield(ch, nil) {
					return
				}
			}
			if len(page) == watchPage {
				continue
			}
			if !w.wait(ctx, time.Time{}) {
				return
			}
		}
	}
}

// Wait blocks until handoff id of workspace ws settles: completed or
// cancelled, or failed or interrupted (waiting for a decision), and returns
// it then. It returns at once for a handoff already settled. Errors:
// ErrNotFound, ctx's error (the handoff goes on), the store's.
func (c *Coordinator) Wait(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (store.Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return store.Handoff{}, err
	}
	w := c.waiter(ws)
	defer w.cancel()
	for {
		h, err := c.Get(ctx, ws, id)
		if err != nil {
			return store.Handoff{}, err
		}
		if !isActive(h.State) {
			return h, nil
		}
		if !w.wait(ctx, time.Time{}) {
			return store.Handoff{}, ctx.Err()
		}
	}
}

// List returns the workspace's handoffs, oldest first. Errors:
// session.ErrNoWorkspace, the store's.
func (c *Coordinator) List(ctx context.Context, ws baton.WorkspaceID) ([]store.Handoff, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	var out []store.Handoff
	err := c.store.View(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetWorkspace(tx, ws); err != nil {
			return err
		}
		all, err := tx.ListHandoffs(ws)
		out = make([]store.Handoff, 0, len(all))
		for _, h := range all {
			out = append(out, public(h))
		}
		return err
	})
	return out, err
}

// waiter waits for a workspace's next commit: a store.Notifier's
// notification, or else the next poll.
type waiter struct {
	c      *Coordinator
	notify <-chan struct{}
	cancel func()
}

func (c *Coordinator) waiter(ws baton.WorkspaceID) *waiter {
	w := &waiter{c: c, cancel: func() {}}
	if n, ok := c.store.(store.Notifier); ok {
		w.notify, w.cancel = n.Subscribe(ws)
	}
	return w
}

// wait blocks until the workspace may have changed or deadline (when not
// zero) has passed; false once ctx is done.
func (w *waiter) wait(ctx context.Context, deadline time.Time) bool {
	var poll, due <-chan time.Time
	if w.notify == nil {
		t := w.c.clock.NewTimer(w.c.poll)
		defer t.Stop()
		poll = t.C()
	}
	if !deadline.IsZero() {
		t := clock.NewTimerAt(w.c.clock, deadline)
		defer t.Stop()
		due = t.C()
	}
	select {
	case <-ctx.Done():
		return false
	case <-w.notify:
	case <-poll:
	case <-due:
	}
	return true
}

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
