package handoff

import (
	"context"
	"errors"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// errNotPermitted is what the machine returns for a trigger its table does
// not allow in the current state (or whose guards all fail). Callers turn it
// into the public error that fits (ErrTransferRunning, errStaleAttempt, ...).
var errNotPermitted = errors.New("handoff: transition not permitted")

// input is what a trigger carries.
type input struct {
	trigger   machineTrigger
	attempt   int           // engine triggers: the attempt they belong to
	nativeID  string        // TargetReady
	actual    engine.Actual // TargetReady, TargetExited: what the target reported it runs
	exit      engine.ExitStatus
	errMsg    string // why an attempt failed or was interrupted
	confirmed bool   // GenerationTimedOut, Shutdown: the stop was confirmed
	takeOver  bool   // CancelUnconfirmed: take the reservation from a dead process
	report    string // SubmitReport: trimmed text
	facts     string // triggers that may enter starting: the gathered facts
	req       Request
	id        baton.HandoffID     // Create: the new handoff's id
	fp        string              // Create: the request's fingerprint
	reason    store.HandoffReason // Create: why baton started it by itself
	// end is a process end left to this firing (the supervisor's HaltDeferred,
	// the supervisor's ExitEnd): recorded in its transaction when it
	// commits, so that the end costs no commit of its own.
	end *workspace.End
	// exitLaunch is the launch whose exit TargetExited carries: the usage
	// its turn reported is recorded with it.
	exitLaunch baton.LaunchID
}

// fire is one firing of the machine inside one store transaction. The
// machine reads and writes h; effects write other records through tx.
type fire struct {
	input
	c   *Coordinator
	tx  store.Tx
	h   *store.Handoff
	now time.Time
	row store.Handoff
	// from is the state the firing left.
	from store.HandoffState
	// The source session, loaded by src on first use.
	source    *store.Session
	srcRow    store.Session
	srcLoaded bool
	srcErr    error

	// Outputs, valid once the transaction has committed.
	owner    workspace.Owner // a reservation was (re)taken
	genToken baton.Token     // a report-only turn was armed
	launch   baton.LaunchID  // the launch recorded for the state entered
}

type fireKey struct{}

func fireOf(ctx context.Context) *fire { return ctx.Value(fireKey{}).(*fire) }

// unchanged aborts a firing's transaction when there is nothing to do: the
// handoff is returned as it is (an exact replay of a request, a decision on
// a settled handoff, a transfer another live process drives). Nothing is
// written.
type unchanged struct{ h store.Handoff }

func (u *unchanged) Error() string { return "handoff: " + string(u.h.ID) + " unchanged" }

// apply runs in: inside one Update it loads the handoff (or starts a new one
// for Create) into f.row, lets check refuse it (check may also adjust the
// trigger and its input: it runs again on a store retry), fires the trigger
// and writes the row. It returns the committed row and the firing's outputs,
// or, when check answered unchanged, that row as it is and a nil firing.
func (c *Coordinator) apply(ctx context.Context, id baton.HandoffID, in input, check func(f *fire) error) (store.Handoff, *fire, error) {
	// One allocation holds the firing, its input and the row; the closure
	// captures only f, so in and the row do not escape separately.
	f := &fire{input: in}
	err := c.store.Update(ctx, func(tx store.Tx) error {
		// A fresh firing on every call: a store may run fn again after a
		// conflict, and nothing of an aborted try may leak into the next.
		*f = fire{input: f.input, c: c, tx: tx}
		f.h = &f.row
		if f.trigger != triggerCreate {
			var err error
			if f.row, err = tx.GetHandoff(id); err != nil {
				return notFound(err)
			}
		}
		if check != nil {
			if err := check(f); err != nil {
				return err
			}
		}
		if err := f.end.Record(tx); err != nil {
			return err
		}
		f.now = c.clock.Now()
		f.from = f.row.State
		if err := c.sm.FireCtx(context.WithValue(ctx, fireKey{}, f), f.trigger); err != nil {
			return err
		}
		if f.srcErr != nil {
			return f.srcErr
		}
		f.row.UpdatedAt = f.now
		return tx.PutHandoff(f.row)
	})
	if u := (*unchanged)(nil); errors.As(err, &u) {
		return u.h, nil, nil
	}
	if err != nil {
		return store.Handoff{}, nil, err
	}
	f.tx = nil
	c.noteTake(f)
	c.observe(f.trigger, f.row)
	return f.row, f, nil
}

// noteTake remembers the handoffs whose reservation this Coordinator took
// in a committed firing, until they settle.
func (c *Coordinator) noteTake(f *fire) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := f.row.ID
	switch {
	case f.row.State.Terminal():
		c.untake(id)
	case !f.owner.Token.IsZero():
		if _, ok := c.took[id]; ok || c.closed {
			return
		}
		ctx, stop := context.WithCancel(c.root)
		c.took[id] = stop
		c.wg.Add(1)
		go c.follow(ctx, id, f.row.Workspace)
	}
}

// untake forgets, under c.mu, that this Coordinator took handoff id's
// reservation, and stops following it.
func (c *Coordinator) untake(id baton.HandoffID) {
	if stop, ok := c.took[id]; ok {
		stop()
		delete(c.took, id)
	}
}

// tookHere reports whether this Coordinator itself took the reservation of
// handoff h and still holds it: it drives the transfer, or keeps it for a
// decision, and Reconcile must leave it alone.
func (c *Coordinator) tookHere(tx store.Tx, h store.Handoff) bool {
	c.mu.Lock()
	_, took := c.took[h.ID]
	c.mu.Unlock()
	if !took {
		return false
	}
	r, err := tx.GetReservation(h.Workspace)
	return err == nil && r.Held && r.Handoff == h.ID && c.holds(r)
}

// src loads the source session on first use (most transitions never need
// it). A store error other than not-found is kept and aborts the
// transaction after the firing.
func (f *fire) src() *store.Session {
	if f.srcLoaded {
		return f.source
	}
	f.srcLoaded = true
	if f.h.SourceSession == "" {
		return nil
	}
	s, err := f.tx.GetSession(f.h.SourceSession)
	switch {
	case err == nil:
		f.srcRow = s
		f.source = &f.srcRow
	case !errors.Is(err, store.ErrNotFound):
		f.srcErr = err
	}
	return f.source
}

// engineCheck admits an engine trigger only for the current attempt, in an
// active state, with no Stop requested.
func (c *Coordinator) engineCheck(attempt int) func(*fire) error {
	return func(f *fire) error {
		if h := f.row; h.Attempt != attempt || h.StopRequested || !isActive(h.State) {
			return errStaleAttempt
		}
		return nil
	}
}

func isActive(s store.HandoffState) bool {
	return s == store.StateStopping || s == store.StateGenerating || s == store.StateStarting
}

// event applies an engine trigger of h's attempt; a refusal is
// errStaleAttempt. The process end the input carries is finished either
// way: recorded with the trigger, or committed alone when the trigger is
// refused.
func (c *Coordinator) event(ctx context.Context, h store.Handoff, in input) (*fire, error) {
	in.attempt = h.Attempt
	_, f, err := c.apply(ctx, h.ID, in, c.engineCheck(h.Attempt))
	in.end.Finish(err == nil)
	if errors.Is(err, errNotPermitted) {
		err = errStaleAttempt
	}
	return f, err
}
