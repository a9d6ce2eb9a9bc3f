package handoff

import (
	"context"
	"errors"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/token"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// errNotPermitted is what the machine returns for a trigger its table does
// not allow in the current state (or whose guards all fail). Callers turn it
// into the public error that fits (ErrTransferRunning, ErrStaleAttempt, ...).
var errNotPermitted = errors.New("handoff: transition not permitted")

// input is what a trigger carries.
type input struct {
	trigger   Trigger
	attempt   int    // engine triggers: the attempt they belong to
	nativeID  string // TargetReady
	exit      engine.ExitStatus
	errMsg    string // why an attempt failed or was interrupted
	confirmed bool   // GenerationTimedOut, Shutdown: the stop was confirmed
	report    string // SubmitReport: trimmed text
	req       Request
	id        string // Create: the new handoff's id
	fp        string // Create: the request's fingerprint
}

// fire is one firing of the machine inside one store transaction. The
// machine reads and writes h; effects write other records through tx.
type fire struct {
	input
	c      *Coordinator
	tx     store.Tx
	h      *store.Handoff
	now    time.Time
	source *store.Session // the source session, when there is one

	// Outputs, valid once the transaction has committed.
	owner    session.Owner // a reservation was (re)taken
	genToken token.Token   // a report-only turn was armed
}

type fireKey struct{}

func fireOf(ctx context.Context) *fire { return ctx.Value(fireKey{}).(*fire) }

// apply runs in: inside one Update it loads the handoff (or starts a new one
// for Create), lets check refuse it, fires the trigger and writes the row.
// It returns the committed row and the firing's outputs.
func (c *Coordinator) apply(ctx context.Context, id string, in input, check func(tx store.Tx, h store.Handoff) error) (store.Handoff, *fire, error) {
	var f *fire
	err := c.store.Update(ctx, func(tx store.Tx) error {
		h := store.Handoff{}
		if in.trigger != TriggerCreate {
			var err error
			if h, err = tx.GetHandoff(handoffID(id)); err != nil {
				return notFound(err)
			}
		}
		if check != nil {
			if err := check(tx, h); err != nil {
				return err
			}
		}
		f = &fire{input: in, c: c, tx: tx, h: &h, now: c.clock.Now()}
		if src := sourceOf(h, in); src != "" {
			s, err := tx.GetSession(baton.SessionID(src))
			if err == nil {
				f.source = &s
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if err := c.sm.FireCtx(context.WithValue(ctx, fireKey{}, f), in.trigger); err != nil {
			return err
		}
		h.UpdatedAt = f.now
		if in.trigger == TriggerCreate {
			return tx.InsertHandoff(h)
		}
		return tx.PutHandoff(h)
	})
	if err != nil {
		return store.Handoff{}, nil, err
	}
	c.observe(in.trigger, *f.h)
	return *f.h, f, nil
}

func sourceOf(h store.Handoff, in input) string {
	if in.trigger == TriggerCreate {
		return string(in.req.SourceSession)
	}
	return string(h.SourceSession)
}

// engineCheck admits an engine trigger only for the current attempt, in an
// active state, with no Stop requested.
func (c *Coordinator) engineCheck(attempt int) func(store.Tx, store.Handoff) error {
	return func(_ store.Tx, h store.Handoff) error {
		if h.Attempt != attempt || h.StopRequested || !isActive(h.State) {
			return ErrStaleAttempt
		}
		return nil
	}
}

func isActive(s store.HandoffState) bool {
	return s == store.StateStopping || s == store.StateGenerating || s == store.StateStarting
}

// event applies an engine trigger of attempt; a refusal is ErrStaleAttempt.
func (c *Coordinator) event(ctx context.Context, id string, attempt int, in input) (store.Handoff, *fire, error) {
	in.attempt = attempt
	h, f, err := c.apply(ctx, id, in, c.engineCheck(attempt))
	if errors.Is(err, errNotPermitted) {
		err = ErrStaleAttempt
	}
	return h, f, err
}
