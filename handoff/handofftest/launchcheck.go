package handofftest

import (
	"context"
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// checkedEngine sits right above the scripted engine, below every node and
// every planted wrapper: it checks each start request against the store and
// the model at the moment of the start, then records which node made it.
type checkedEngine struct{ h *harness }

func (e checkedEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	n := nodeOf(ctx)
	e.h.checkLaunch(n, req)
	if n >= 0 && req.Attempt > 0 && req.Turn == transcript.Normal {
		// A request the plan makes land between the target's launch
		// record and its spawn.
		if err := e.h.onTargetSpawn(n, req); err != nil {
			return nil, err
		}
	}
	if n >= 0 && req.LaunchID != "" {
		// Known by its id before Start returns: the scripted engine's
		// callbacks may settle a transfer before then.
		e.h.mu.Lock()
		e.h.launchID[req.LaunchID] = launchInfo{node: n, life: e.h.nodes[n].life}
		e.h.mu.Unlock()
	}
	p, err := e.h.eng.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	if sp, ok := p.(interface{ N() int }); ok && n >= 0 {
		e.h.mu.Lock()
		e.h.launchNode[sp.N()] = launchInfo{node: n, life: e.h.nodes[n].life}
		e.h.mu.Unlock()
	}
	return p, nil
}

func (e checkedEngine) Validate(cfg baton.EngineConfig) error { return e.h.eng.Validate(cfg) }

func (e checkedEngine) ReapLaunch(ctx context.Context, id baton.LaunchID) (engine.StopOutcome, error) {
	if rs, ok := e.h.scriptedReap(); ok {
		return rs.out, rs.err
	}
	return e.h.eng.ReapLaunch(ctx, id)
}

// checkLaunch asserts, at the moment of a start, that it carries the
// current reservation's owner token when the workspace is reserved (and
// none may start without it), and that its shape is the one the model
// expects: mode, native id, configuration, Dir = the workspace's root, and
// attempt. Violations are recorded for the next check: this runs on the
// launching goroutine.
func (h *harness) checkLaunch(node int, req engine.StartRequest) {
	var (
		ws       store.Workspace
		res      store.Reservation
		reserved bool
		hf       store.Handoff
		hfErr    error
		sess     store.Session
		sessErr  error
	)
	err := h.raw.View(context.Background(), func(tx store.Tx) error {
		var err error
		if ws, err = tx.GetWorkspace(req.Workspace); err != nil {
			return err
		}
		res, err = tx.GetReservation(req.Workspace)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		reserved = err == nil && res.Held
		switch {
		case req.Report != nil:
			hf, hfErr = tx.GetHandoff(req.Report.Handoff)
		case req.Attempt > 0:
			hf, hfErr = pendingOf(tx, req.Workspace)
		}
		sess, sessErr = tx.GetSession(req.Session)
		return nil
	})
	bad := func(format string, args ...any) {
		h.violate("invariant 3/8: launch by node %d of session %s in %s (%s, %s, attempt %d): %s",
			node, req.Session, req.Workspace, req.Turn, req.Mode, req.Attempt, fmt.Sprintf(format, args...))
	}
	if err != nil {
		bad("reading the store: %v", err)
		return
	}
	if req.Dir != ws.Root {
		bad("Dir %q, want the workspace root %q", req.Dir, ws.Root)
	}
	switch {
	case reserved && req.Owner.IsZero():
		bad("no owner token while the workspace is reserved (epoch %d, handoff %s)", res.Epoch, res.Handoff)
	case reserved && !res.Owner.Matches(req.Owner):
		bad("a stale or foreign owner token (reservation at epoch %d, handoff %s)", res.Epoch, res.Handoff)
	case !reserved && req.Attempt > 0:
		bad("a transfer's launch while the workspace is not reserved")
	default:
		if reserved {
			h.mu.Lock()
			if h.owners[req.Workspace] == nil {
				h.owners[req.Workspace] = map[int64]baton.Token{}
			}
			h.owners[req.Workspace][res.Epoch] = req.Owner
			h.mu.Unlock()
		}
	}
	if sessErr != nil {
		bad("session: %v", sessErr)
		return
	}
	switch {
	case req.Turn == transcript.ReportOnly:
		h.checkReportLaunch(req, hf, hfErr, sess, bad)
	case req.Attempt > 0:
		h.checkTargetLaunch(req, hf, hfErr, bad)
	default:
		if sess.Status != store.SessionRunning {
			bad("an ordinary launch of a session recorded %s", sess.Status)
		}
		if req.Config != sess.Config {
			bad("config %+v, the session's is %+v", req.Config, sess.Config)
		}
		want := engine.Fresh
		if sess.NativeID != "" {
			want = engine.Resume
		}
		if req.Mode != want || req.NativeID != sess.NativeID {
			bad("mode %s native %q, want %s native %q", req.Mode, req.NativeID, want, sess.NativeID)
		}
	}
}

func (h *harness) checkReportLaunch(req engine.StartRequest, hf store.Handoff, hfErr error, src store.Session, bad func(string, ...any)) {
	if req.Report == nil {
		bad("a report-only turn without credentials")
		return
	}
	if hfErr != nil {
		bad("handoff %s: %v", req.Report.Handoff, hfErr)
		return
	}
	switch {
	case hf.State != store.StateGenerating || hf.StopRequested:
		bad("handoff %s is %s (stop requested %v), not generating", hf.ID, hf.State, hf.StopRequested)
	case req.Attempt != hf.Attempt || req.Report.Attempt != hf.Attempt:
		bad("attempt %d (credentials %d), the handoff is at %d", req.Attempt, req.Report.Attempt, hf.Attempt)
	case req.Mode != engine.Resume || req.NativeID == "" || req.NativeID != src.NativeID:
		bad("mode %s native %q, want a resume of the source's native %q", req.Mode, req.NativeID, src.NativeID)
	}
	h.later(hf.ID, bad, func(m *model) string {
		switch {
		case req.Session != m.source:
			return fmt.Sprintf("resumes %s, not the source %s", req.Session, m.source)
		case req.Config != m.sourceConfig:
			return fmt.Sprintf("config %+v, want the source's %+v", req.Config, m.sourceConfig)
		}
		return ""
	})
}

// later queues a check of a launch against the model of handoff id, run at
// the next check: a launch may come before the harness has recorded the
// handoff that caused it (Create returns after the driver started).
func (h *harness) later(id baton.HandoffID, bad func(string, ...any), fn func(*model) string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.deferred = append(h.deferred, func() {
		m := h.hs[id]
		if m == nil {
			bad("handoff %s is not one the harness created", id)
			return
		}
		if why := fn(m); why != "" {
			bad("%s", why)
		}
	})
}

func (h *harness) checkTargetLaunch(req engine.StartRequest, hf store.Handoff, hfErr error, bad func(string, ...any)) {
	if hfErr != nil {
		bad("no pending handoff: %v", hfErr)
		return
	}
	switch {
	case hf.State != store.StateStarting || hf.StopRequested:
		bad("handoff %s is %s (stop requested %v), not starting", hf.ID, hf.State, hf.StopRequested)
	case req.Attempt != hf.Attempt:
		bad("attempt %d, the handoff is at %d", req.Attempt, hf.Attempt)
	case req.Session != hf.TargetSession:
		bad("session %s, the attempt's target is %s", req.Session, hf.TargetSession)
	case req.Mode != engine.Fresh || req.NativeID != "":
		bad("mode %s native %q, want a fresh start", req.Mode, req.NativeID)
	}
	h.later(hf.ID, bad, func(m *model) string {
		if want := m.req.Target.Normalize(); req.Config != want {
			return fmt.Sprintf("config %+v, want the requested target %+v", req.Config, want)
		}
		return ""
	})
}
