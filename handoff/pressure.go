package handoff

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// SetPressure sets workspace ws's context-pressure policy (see "Context
// pressure" in the package documentation) and re-arms it for the current
// session, which a cancelled or skipped pressure transfer disarmed. The
// zero policy turns it off. It returns the workspace as committed.
//
// When a turn crosses the threshold, the session is marked
// store.PressureDue in the transaction that records the turn's end; the
// transfer, with the policy's target (default the source's configuration)
// and a report first if Report is set, takes request id
// context-pressure:<session>:<launch> and marks it store.PressureFired. A
// queued instruction goes to the target, or to the session itself when the
// transfer is refused. A cancelled or skipped pressure transfer leaves the
// policy disarmed for its source session. The handoff records why it
// started (store.HandoffReason).
//
// Choose the threshold to leave room for what follows it: the turn that
// crosses it has already run, and a report-only turn adds its prompt and the
// report to a nearly full window. 0.8 suits a 200k-token window; lower it
// for a small window or a long report. An engine that reports tokens but no
// window never fires it either.
//
// Errors: ErrInvalidRequest (a threshold outside [0, 1], or a target
// configuration the engines do not offer), session.ErrNoWorkspace,
// session.ErrArchived, ErrClosed, the store's.
func (c *Coordinator) SetPressure(ctx context.Context, ws baton.WorkspaceID, p store.PressurePolicy) (store.Workspace, error) {
	if err := c.live(ctx); err != nil {
		return store.Workspace{}, err
	}
	p, err := workspace.CheckPressure(c.engines, p)
	if err != nil {
		return store.Workspace{}, fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	var out store.Workspace
	err = c.store.Update(ctx, func(tx store.Tx) error {
		w, err := workspace.GetActive(tx, ws)
		if err != nil {
			return err
		}
		w.Pressure, w.UpdatedAt = p, c.clock.Now()
		out = w
		if w.CurrentSession != "" {
			s, err := tx.GetSession(w.CurrentSession)
			if err == nil && s.Pressure == store.PressureFired {
				s.Pressure = store.PressureArmed
				err = tx.PutSession(s)
			}
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return tx.PutWorkspace(w)
	})
	return out, err
}

// pressured is the session service's hook: a settled turn made a
// context-pressure transfer due for session sid of ws. It is created in
// the background, once the turn's end has committed (once the Coordinator
// is shut down, Recover or Reconcile creates it after the restart). When
// it is refused, the instructions queued while it was due, which waited
// for it, are delivered to the session.
func (c *Coordinator) pressured(ws baton.WorkspaceID, sid baton.SessionID) {
	c.background(func() {
		if !c.firePressure(c.root, ws, sid) {
			return
		}
		if _, _, err := c.svc.DeliverPending(c.root, ws); err != nil && c.root.Err() == nil {
			c.log.Warn("delivering a queued instruction failed", zap.String("workspace", string(ws)), zap.Error(err))
		}
	})
}

// errNotDue ends a pressure creation that finds nothing due any more.
var errNotDue = errors.New("handoff: no context-pressure transfer is due")

// pressureRequestID names the transfer of the turn of launch that made it
// due on session sid: launch records are durable and a launch settles
// once, so every node and every restart that finds it due asks for the
// same transfer.
func pressureRequestID(sid baton.SessionID, launch baton.LaunchID) string {
	return "context-pressure:" + string(sid) + ":" + string(launch)
}

// firePressure creates the context-pressure transfer due for session sid
// of ws (store.PressureDue), in the transaction that marks the session
// store.PressureFired. Its request is derived from the workspace's policy
// and the session's usage, so it is idempotent across nodes and restarts.
// When the creation is refused (another transfer pending, the session no
// longer current or running a turn again, a target the engines refuse) the
// policy is disarmed for the session instead, the refusal logged, and
// firePressure reports true.
func (c *Coordinator) firePressure(ctx context.Context, ws baton.WorkspaceID, sid baton.SessionID) (refused bool) {
	var (
		w    store.Workspace
		sess store.Session
	)
	if err := c.store.View(ctx, func(tx store.Tx) (err error) {
		if w, err = tx.GetWorkspace(ws); err == nil {
			sess, err = tx.GetSession(sid)
		}
		return err
	}); err != nil || sess.Pressure != store.PressureDue {
		if err != nil {
			c.log.Warn("context-pressure transfer not created", zap.String("session", string(sid)), zap.Error(err))
		}
		return false
	}
	p := w.Pressure
	target := p.Target
	if target == (baton.EngineConfig{}) {
		target = sess.Config
	}
	req := Request{Workspace: ws, RequestID: pressureRequestID(sid, sess.Usage.Launch), SourceSession: sid,
		GenerateSummary: p.Report, Target: target}.normalized()
	in := input{trigger: triggerCreate, req: req, id: baton.HandoffID(ids.New("hof")), fp: req.fingerprint(),
		reason: store.HandoffReason{Trigger: store.TriggerContextPressure, Tokens: sess.Usage.Tokens, Window: sess.Usage.Window, Threshold: p.Threshold}}
	check := c.pressureCheck(req, in.fp, sid)
	err := req.validate()
	var (
		h store.Handoff
		f *fire
	)
	if err == nil {
		h, f, err = c.apply(ctx, "", in, check)
		if errors.Is(err, store.ErrDuplicate) {
			h, f, err = c.apply(ctx, "", in, check)
		}
	}
	switch {
	case errors.Is(err, errNotDue):
		return false
	case err != nil && ctx.Err() == nil && !errors.Is(err, baton.ErrUnavailable):
		c.log.Warn("context-pressure transfer refused; the policy is disarmed for the session",
			zap.String("session", string(sid)), zap.Error(err))
		c.disarm(ctx, sid)
		return true
	case err != nil:
		c.log.Warn("context-pressure transfer not created", zap.String("session", string(sid)), zap.Error(err))
		return false
	}
	if f != nil {
		c.log.Info("context-pressure transfer created", zap.String("handoff", string(h.ID)), zap.String("session", string(sid)),
			zap.Int64("tokens", sess.Usage.Tokens), zap.Int64("window", sess.Usage.Window), zap.Float64("threshold", p.Threshold))
	}
	_, _ = c.started(h, f, nil)
	return false
}

// pressureCheck is Create's check for a context-pressure transfer, which
// also marks the source session fired, in the same transaction.
func (c *Coordinator) pressureCheck(req Request, fp string, sid baton.SessionID) func(*fire) error {
	create := c.createCheck(req, fp)
	return func(f *fire) error {
		if err := create(f); err != nil {
			return err // an exact replay answers unchanged
		}
		s, err := f.tx.GetSession(sid)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return errNotDue
		case err != nil:
			return err
		case s.Pressure != store.PressureDue:
			return errNotDue
		case s.Status == store.SessionRunning:
			return baton.Errorf(ErrSourceChanged, "session %s runs a turn again", sid)
		}
		s.Pressure = store.PressureFired
		return f.tx.PutSession(s)
	}
}

// callerCheck is Create's check: createCheck's guards, and then, for a
// transfer from a session whose context-pressure transfer is due (a crash
// left it uncreated), the caller's transfer takes its place: the session
// is marked store.PressureFired in the same transaction, as a skipped
// pressure transfer leaves it. Left due, it would stay so once the
// caller's transfer completed (Recover and Reconcile create only the
// current session's), and every later write to it would be refused as
// busy.
func (c *Coordinator) callerCheck(req Request, fp string) func(*fire) error {
	create := c.createCheck(req, fp)
	return func(f *fire) error {
		if err := create(f); err != nil || req.SourceSession == "" {
			return err
		}
		return markFired(f.tx, req.SourceSession)
	}
}

// markFired marks session sid store.PressureFired when it is due; an
// unknown session is left alone.
func markFired(tx store.Tx, sid baton.SessionID) error {
	s, err := tx.GetSession(sid)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || s.Pressure != store.PressureDue {
		return err
	}
	s.Pressure = store.PressureFired
	return tx.PutSession(s)
}

// disarm marks session sid fired, when it is still due: its transfer was
// refused, and the policy waits for SetPressure to re-arm it.
func (c *Coordinator) disarm(ctx context.Context, sid baton.SessionID) {
	err := c.store.Update(context.WithoutCancel(ctx), func(tx store.Tx) error { return markFired(tx, sid) })
	if err != nil {
		c.log.Warn("disarming the context-pressure policy failed", zap.String("session", string(sid)), zap.Error(err))
	}
}

// createDue creates the context-pressure transfers a crash left due and
// uncreated (Recover, Reconcile): the current session of every workspace
// with a policy, when it is store.PressureDue.
func (c *Coordinator) createDue(ctx context.Context) error {
	type due struct {
		ws  baton.WorkspaceID
		sid baton.SessionID
	}
	var all []due
	err := c.store.View(ctx, func(tx store.Tx) error {
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, w := range wss {
			if w.Pressure.Threshold <= 0 || w.CurrentSession == "" {
				continue
			}
			s, err := tx.GetSession(w.CurrentSession)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if s.Pressure == store.PressureDue {
				all = append(all, due{w.ID, s.ID})
			}
		}
		return nil
	})
	for _, d := range all {
		c.firePressure(ctx, d.ws, d.sid)
	}
	return err
}
