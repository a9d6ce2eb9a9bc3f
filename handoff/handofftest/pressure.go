package handofftest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// The model of the context-pressure policy (invariant 11), the harness's
// own reading of "Context pressure" in package handoff's documentation:
//
//   - a workspace's policy is what SetPressure set last (a threshold drawn
//     as a whole percentage, so that the model compares in integers:
//     tokens*100 >= percent*window);
//   - a turn settles when its end is recorded; it fires the policy when it
//     ended on its own (not stopped), reported tokens (more than 0) against
//     a known window (more than 0) at or above the threshold, in a session
//     that is the workspace's current one and armed, in a workspace neither
//     archived nor reserved (no transfer pending) at the settle;
//   - a settle that fires marks its session due, and the transfer it makes
//     is created once, with the request id context-pressure:<session>:<launch>,
//     the policy's target (else the session's configuration) and report,
//     by the node that recorded the settle or, when that node could not (it
//     crashed or shut down right after the commit), by the next Reconcile or
//     Recover; its creation marks the session fired;
//   - a fired session fires no more until SetPressure re-arms it (it re-arms
//     the workspace's current session only).
//
// Only ordinary turns report usage (drawn per workspace before the step
// that launches them: see scriptFor); a transfer's own turns report none.
// The model knows a settle exactly where the harness ends the turn (a
// turn's own end, a node's exit that takes its turns with it after a
// shutdown); a crash right after a settle's commit, drawn there, leaves
// the transfer uncreated until the harness restarts the node or another
// node reconciles (quiescence), and meanwhile ordinary writes are refused
// as busy.

// pressureSettle is a settle the model says fires the policy.
type pressureSettle struct {
	ws     baton.WorkspaceID
	sid    baton.SessionID
	launch baton.LaunchID
	req    handoff.Request
	reason store.HandoffReason
	srcCfg baton.EngineConfig
	// arming counts the session's re-arms at the settle: at most one
	// transfer per session and arming.
	arming int
	// handoff is the transfer once created ("" while due).
	handoff baton.HandoffID
	// superseded marks a settle whose transfer a caller's, from the same
	// session, took the place of while it was due: it is never created.
	superseded bool
}

// pressureRequestID is the request id of the transfer a settle of launch
// on session sid makes (see the package documentation of handoff).
func pressureRequestID(sid baton.SessionID, launch baton.LaunchID) string {
	return "context-pressure:" + string(sid) + ":" + string(launch)
}

// drawUsages draws, for each workspace whose last drawn usage a launch
// took, the usage the next ordinary turn there reports: none, tokens with
// no window, or against a window, under, at, over the workspace's
// threshold (0.8 while it has none) or the whole window.
func (h *harness) drawUsages(t *rapid.T) {
	for _, ws := range h.wss {
		h.mu.Lock()
		used := h.usageTaken[ws]
		h.mu.Unlock()
		if !used {
			continue
		}
		pct := h.pressurePct[ws]
		if pct == 0 {
			pct = 80
		}
		window := rapid.SampledFrom([]int64{1000, 200000}).Draw(t, "window")
		at := int64(pct) * window / 100
		var u engine.Usage
		switch rapid.IntRange(0, 6).Draw(t, "usage") {
		case 1:
			u = engine.Usage{Tokens: at + 1} // no window
		case 2:
			u = engine.Usage{Tokens: at - 1, Window: window}
		case 3:
			u = engine.Usage{Tokens: at, Window: window}
		case 4:
			u = engine.Usage{Tokens: at + 1, Window: window}
		case 5:
			u = engine.Usage{Tokens: window, Window: window}
		case 6:
			u = engine.Usage{Window: window} // a window, no tokens: none
		}
		h.mu.Lock()
		h.usageNext[ws], h.usageTaken[ws] = u, false
		h.mu.Unlock()
	}
}

// ordinaryUsage is the usage an ordinary turn launched in ws now reports;
// the next one is drawn before the next step.
func (h *harness) ordinaryUsage(ws baton.WorkspaceID) engine.Usage {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.usageTaken[ws] = true
	return h.usageNext[ws]
}

// actSetPressure sets or clears a workspace's policy on any node: a
// threshold (sometimes one outside [0, 1], refused), a target (sometimes
// blank: the source's configuration) and whether a report comes first.
// It re-arms the current session if it fired.
func (h *harness) actSetPressure(t *rapid.T) {
	h.setPressure(t, h.drawWS(t), h.drawUp(t), []int{0, 50, 55, 80, 100, 150})
	h.await()
}

// setPressure sets ws's policy through node n, with a threshold drawn from
// pcts (in percent), and predicts it.
func (h *harness) setPressure(t *rapid.T, ws baton.WorkspaceID, n *node, pcts []int) {
	pct := rapid.SampledFrom(pcts).Draw(t, "pressurePercent")
	p := store.PressurePolicy{
		Threshold: float64(pct) / 100,
		Report:    rapid.Bool().Draw(t, "pressureReport"),
		Target:    rapid.SampledFrom(append([]baton.EngineConfig{{}}, configs...)).Draw(t, "pressureTarget"),
	}
	switch {
	case pct > 100:
		h.unchanged("a threshold outside [0, 1]", func() {
			_, err := n.co.SetPressure(h.ctx, ws, p)
			expectErr(h, "a threshold outside [0, 1]", err, handoff.ErrInvalidRequest)
		})
		return
	case h.archived[ws]:
		h.unchanged("a policy for an archived workspace", func() {
			_, err := n.co.SetPressure(h.ctx, ws, p)
			expectErr(h, "a policy for an archived workspace", err, session.ErrArchived)
		})
		return
	}
	cur := h.current(ws)
	got, err := n.co.SetPressure(h.ctx, ws, p)
	if err != nil {
		h.fatalf("SetPressure %+v on %s in %s: %v", p, n.id, ws, err)
	}
	if p.Target = p.Target.Normalize(); got.Pressure != p {
		h.fatalf("invariant 11: SetPressure %+v in %s committed %+v", p, ws, got.Pressure)
	}
	h.pressure[ws], h.pressurePct[ws] = p, pct
	if cur != "" && h.marks[cur] == store.PressureFired {
		h.marks[cur] = store.PressureArmed
		h.arming[cur]++
		h.log.add(fmt.Sprintf("   model: %s re-armed", cur))
	}
}

// actPressureTurn lines up what single steps rarely do: a workspace with
// a policy (set, or set again: a re-arm), a turn there, its own end (whose
// settle may fire the policy: see turnEnds), and sometimes the cancel of
// the transfer it made, which leaves the source current and disarmed;
// then another round there, re-armed or not.
func (h *harness) actPressureTurn(t *rapid.T) {
	ws := h.drawWS(t)
	for round := 0; round < 3; round++ {
		if h.pendingIn(ws) != nil || h.archived[ws] || h.instrUncertain[ws] || h.orphaned(ws) || h.staleRow(ws) {
			if round == 0 {
				t.Skip("the workspace is reserved, archived, or its queue or processes unknown to the model")
			}
			return
		}
		n := h.queueNode(t, ws)
		if h.pressurePct[ws] == 0 || rapid.IntRange(0, 2).Draw(t, "setPressureFirst") == 0 {
			h.setPressure(t, ws, n, []int{50, 55, 80, 100})
		}
		if h.nothingRuns(ws) {
			h.mu.Lock()
			h.usageTaken[ws] = true // drawn again against the threshold just set
			h.mu.Unlock()
			h.drawUsages(t)
			h.startTurn(ws, n, "fill")
		}
		procs := h.endableTurns(ws)
		if len(procs) == 0 {
			if round == 0 {
				t.Skip("no turn of a node that is up runs there alone")
			}
			return
		}
		before := len(h.order)
		h.turnEnds(ws, procs[0])
		if len(h.order) == before {
			return
		}
		m := h.hs[h.order[len(h.order)-1]]
		if !m.pending() || m.uncertain || n.gate.get() != nodeUp || rapid.IntRange(0, 2).Draw(t, "cancelPressure") != 0 {
			return
		}
		h.queueUncertain(ws)
		h.cancel(t, m, func(ctx context.Context) error { _, err := n.co.Stop(ctx, ws); return err })
		if m.state != store.StateCancelled || m.uncertain {
			return
		}
	}
}

// settleOf predicts the settle of ordinary turn p of ws ending on its own
// now: the settle that fires the policy, nil when the rules say it does
// not. It reads the model and the store as they are before the end.
func (h *harness) settleOf(ws baton.WorkspaceID, p *enginetest.Process) *pressureSettle {
	req := p.Request()
	u := p.Script().Usage
	pol, pct := h.pressure[ws], h.pressurePct[ws]
	sid := req.Session
	switch {
	case pct == 0 || u.Tokens <= 0 || u.Window <= 0 || u.Tokens*100 < int64(pct)*u.Window:
		return nil
	case req.Turn != transcript.Normal || req.Attempt != 0 || req.Report != nil || req.LaunchID == "":
		return nil // not an ordinary turn
	case h.archived[ws] || h.pendingIn(ws) != nil || h.reservation(ws).Held:
		return nil
	case h.current(ws) != sid || h.marks[sid] != store.PressureArmed:
		return nil
	}
	src, err := h.session(sid)
	if err != nil {
		h.fatalf("session %s: %v", sid, err)
	}
	target := pol.Target
	if target == (baton.EngineConfig{}) {
		target = src.Config
	}
	return &pressureSettle{
		ws: ws, sid: sid, launch: req.LaunchID, arming: h.arming[sid], srcCfg: src.Config,
		req: handoff.Request{Workspace: ws, RequestID: pressureRequestID(sid, req.LaunchID), SourceSession: sid,
			GenerateSummary: pol.Report, Target: target},
		reason: store.HandoffReason{Trigger: store.TriggerContextPressure, Tokens: u.Tokens, Window: u.Window, Threshold: pol.Threshold},
	}
}

// settled notes in the model that s fired: its session is due, and its
// transfer's attempt is scripted.
func (h *harness) settled(t *rapid.T, s *pressureSettle) {
	h.settles[s.req.RequestID] = s
	h.marks[s.sid] = store.PressureDue
	h.setPlan(s.ws, drawPlan(t, s.ws, h.nextSeq(), len(h.nodes)))
	// A queued instruction waits for the transfer (it goes to the target).
	h.queueUncertain(s.ws)
	h.log.add(fmt.Sprintf("   model: settle of %s (launch %s) fires the context-pressure policy of %s", s.sid, s.launch, s.ws))
}

// dueIn returns the settle of ws whose transfer is due and not created
// yet, nil when none is.
func (h *harness) dueIn(ws baton.WorkspaceID) *pressureSettle {
	for _, s := range h.settles {
		if s.ws == ws && s.handoff == "" && !s.superseded {
			return s
		}
	}
	return nil
}

// awaitCreated waits (bounded) for the transfer of settle s, created by
// whichever node could, and tracks it: it starts as any new transfer does,
// driven by the node that took the reservation, nothing running in the
// workspace (the turn that fired it has ended).
func (h *harness) awaitCreated(s *pressureSettle, what string) *model {
	h.t.Helper()
	deadline := time.Now().Add(h.cfg.Wait)
	var got store.Handoff
	for {
		err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { got, err = tx.HandoffByRequest(s.ws, s.req.RequestID); return err })
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			var ses store.Session
			ses, _ = h.session(s.sid)
			h.fatalf("invariant 11: %s: no context-pressure transfer %q in %s after %v (session %s marked %q, usage %+v)",
				what, s.req.RequestID, s.ws, h.cfg.Wait, s.sid, ses.Pressure, ses.Usage)
		}
		time.Sleep(200 * time.Microsecond) // a bounded poll: the creation runs on a node's goroutine
	}
	s.handoff = got.ID
	h.marks[s.sid] = store.PressureFired
	m := h.track(got, s.req, s.srcCfg)
	m.pressure = s
	if d := h.nodeByID(h.reservation(s.ws).LeaseHolder); d != nil {
		m.takenBy, m.takenLife = d, d.life
	}
	h.settleFromStopping(m, true)
	m.uncertain = h.orphaned(s.ws)
	h.log.add(fmt.Sprintf("   model: context-pressure transfer %s created (%s)", got.ID, what))
	return m
}

// quiesce creates what a crash or a shutdown left due: the harness
// restarts a node that is gone (its restart reconciles), or has a node
// that runs reconcile, as a host would.
func (h *harness) quiesce(t *rapid.T) {
	if len(h.settlesDue()) == 0 {
		return
	}
	var ups []*node
	for _, n := range h.nodes {
		if n.gate.get() == nodeUp && h.mayReconcile(n) == "" {
			ups = append(ups, n)
		}
	}
	if len(ups) > 0 && rapid.Bool().Draw(t, "quiesceByReconcile") {
		h.reconcileOn(ups[rapid.IntRange(0, len(ups)-1).Draw(t, "quiescer")])
	} else if gone := h.gone(); len(gone) > 0 {
		h.restart(gone[rapid.IntRange(0, len(gone)-1).Draw(t, "quiesceRestart")])
	} else if len(ups) > 0 {
		h.reconcileOn(ups[0])
	}
	if due := h.settlesDue(); len(due) > 0 {
		h.fatalf("invariant 11: the context-pressure transfer %q is still uncreated after a Reconcile", due[0].req.RequestID)
	}
}

// gone returns the nodes that crashed or shut down.
func (h *harness) gone() []*node {
	var out []*node
	for _, n := range h.nodes {
		if st := n.gate.get(); st == nodeCrashed || st == nodeDown {
			out = append(out, n)
		}
	}
	return out
}

// settlesDue returns the settles whose transfer is not created yet.
func (h *harness) settlesDue() []*pressureSettle {
	var out []*pressureSettle
	for _, ws := range h.wss {
		if s := h.dueIn(ws); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// checkPressure is invariant 11: every transfer on record is one the
// harness tracks, and a context-pressure transfer exists exactly for the
// settles the model says fire, one for each, with the reason, request
// and source the settle gives, at most one per session and arming; each
// session's mark is the model's; while a settle's transfer is due, an
// ordinary write is refused (see checkOwners).
func (h *harness) checkPressure(w world) {
	h.t.Helper()
	perArming := map[string]baton.HandoffID{}
	for id, got := range w.all {
		m, ok := h.hs[id]
		switch {
		case !ok && got.Reason.Trigger == store.TriggerContextPressure:
			h.fatalf("invariant 11: context-pressure transfer %s (%q, reason %+v) in %s, for a settle the rules say does not fire; sessions:\n%s",
				id, got.RequestID, got.Reason, got.Workspace, pressureTable(w.sessions[got.Workspace]))
		case !ok:
			h.fatalf("invariant 11: transfer %s (%q, reason %+v) in %s, which nobody asked for", id, got.RequestID, got.Reason, got.Workspace)
		case m.pressure == nil && got.Reason != (store.HandoffReason{}):
			h.fatalf("invariant 11: transfer %s, asked for by a caller, records reason %+v", id, got.Reason)
		case m.pressure == nil:
			continue
		}
		s := m.pressure
		// (Whether it writes a report first is the request's, checked
		// with it by a replay: a Skip drops it.)
		if got.Reason != s.reason || got.RequestID != s.req.RequestID || got.SourceSession != s.sid || got.TargetConfig != s.req.Target.Normalize() {
			h.fatalf("invariant 11: context-pressure transfer %s is %q from %s to %+v for %+v, want %q from %s to %+v for %+v",
				id, got.RequestID, got.SourceSession, got.TargetConfig, got.Reason, s.req.RequestID, s.sid, s.req.Target.Normalize(), s.reason)
		}
		key := fmt.Sprintf("%s/%d", s.sid, s.arming)
		if prev, dup := perArming[key]; dup {
			h.fatalf("invariant 11: two context-pressure transfers from %s in one arming: %s and %s", s.sid, prev, id)
		}
		perArming[key] = id
	}
	for _, s := range h.settles {
		if s.handoff == "" && !s.superseded {
			if _, err := h.handoffByRequest(s.ws, s.req.RequestID); err == nil {
				h.fatalf("invariant 11: context-pressure transfer %q created while the model says it waits for a Reconcile", s.req.RequestID)
			}
		}
	}
	for _, ws := range h.wss {
		if got := w.wss[ws].Pressure; got != h.pressure[ws] {
			h.fatalf("invariant 11: %s's policy is %+v, SetPressure set %+v", ws, got, h.pressure[ws])
		}
		for _, s := range w.sessions[ws] {
			if s.Pressure != h.marks[s.ID] {
				h.fatalf("invariant 11: session %s of %s is marked %q, model %q; sessions:\n%s", s.ID, ws, s.Pressure, h.marks[s.ID], pressureTable(w.sessions[ws]))
			}
		}
	}
}

func (h *harness) handoffByRequest(ws baton.WorkspaceID, id string) (got store.Handoff, err error) {
	err = h.raw.View(h.ctx, func(tx store.Tx) error { got, err = tx.HandoffByRequest(ws, id); return err })
	return got, err
}

func pressureTable(sessions []store.Session) string {
	var b strings.Builder
	for _, s := range sessions {
		fmt.Fprintf(&b, "  %s %s order %d mark %q usage %+v\n", s.ID, s.Status, s.ActivationOrder, s.Pressure, s.Usage)
	}
	return b.String()
}

// crashedAfterSettle follows a settle whose node n crashes right after the
// commit that marked s's session due (the store hook crashes it): nothing
// creates the transfer until the harness restarts a node or has one
// reconcile. Meanwhile the session stays due and ordinary writes there
// are refused as busy (checked at the rest in between).
func (h *harness) crashedAfterSettle(s *pressureSettle, n *node) {
	h.t.Helper()
	for deadline := time.Now().Add(h.cfg.Wait); n.gate.get() != nodeCrashed; {
		if time.Now().After(deadline) {
			h.mu.Lock()
			delete(h.crashOnDue, n.idx)
			h.mu.Unlock()
			ses, _ := h.session(s.sid)
			h.fatalf("invariant 11: the settle of %s (launch %s) in %s did not mark it due within %v: marked %q, usage %+v",
				s.sid, s.launch, s.ws, h.cfg.Wait, ses.Pressure, ses.Usage)
		}
		time.Sleep(200 * time.Microsecond) // a bounded poll: the settle commits on the node's goroutine
	}
	h.log.add(fmt.Sprintf("   %s crashed right after the settle of %s", n.id, s.sid))
	h.setGate(n, nodeCrashed)
	if !h.cfg.Unsteered {
		h.endProcessesOf(n)
	}
	h.await()
	// Sometimes a caller asks for a transfer from the same session on a
	// node that runs, before anything creates the due one: the caller's
	// takes its place.
	if h.nodeUp() != nil && len(h.runningProcs(s.ws)) == 0 && !h.staleRow(s.ws) && rapid.IntRange(0, 2).Draw(h.t, "createWhileDue") == 0 {
		h.createIn(h.t, s.ws)
	}
	h.quiesce(h.t)
}

// supersede notes in the model that a caller's transfer from ws's current
// session was created while a context-pressure transfer from it was due:
// that one is never created, and the session is disarmed.
func (h *harness) supersede(ws baton.WorkspaceID) {
	if s := h.dueIn(ws); s != nil {
		s.superseded = true
		h.marks[s.sid] = store.PressureFired
		h.log.add(fmt.Sprintf("   model: the context-pressure transfer due from %s superseded by a caller's", s.sid))
	}
}

// otherReconciler returns a node other than n that is up and may
// reconcile, nil when there is none.
func (h *harness) otherReconciler(n *node) *node {
	for _, o := range h.nodes {
		if o != n && o.gate.get() == nodeUp && h.mayReconcile(o) == "" {
			return o
		}
	}
	return nil
}
