package handofftest

import (
	"context"
	"errors"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// actLateCallback brings an engine callback to the node that drives a
// transfer after the transfer moved on without it. That node is frozen
// while its transfer waits for a held target, then either
//
//   - its lease lapses, another node reconciles (reaping the target) and
//     retries: on thawing, the frozen node's driver learns that its target
//     is gone, a callback of an earlier attempt; or
//   - another node records a Stop (which waits for the frozen node, and
//     times out) and the held target confirms readiness: on thawing, the
//     driver learns it, a callback after a stop was requested;
//
// and the node thaws. Either callback must be refused. (Drawn as single
// steps, such interleavings come too rarely to find these bugs.)
func (h *harness) actLateCallback(t *rapid.T) {
	m, a, b := h.heldElsewhere(t)
	if m == nil {
		return
	}
	l := h.heldTarget(m)
	h.setGate(a, nodeFrozen)
	if rapid.Bool().Draw(t, "afterStop") {
		h.lateAfterStop(m, b, l.Proc)
		h.thaw(a, m) // the model knows where m comes to rest
		return
	}
	h.lateStale(t, m, b)
	h.thaw(a, nil)
}

// heldElsewhere draws (or creates) a transfer whose target holds its
// readiness, driven by node a that is up, and another node b that is up;
// m is nil when the transfer it created failed at once.
func (h *harness) heldElsewhere(t *rapid.T) (m *model, a, b *node) {
	var held []*model
	for _, id := range h.order {
		m := h.hs[id]
		if m.state == store.StateStarting && m.readyAt.IsZero() && !m.uncertain && h.drivenByUp(m) {
			held = append(held, m)
		}
	}
	if len(held) == 0 {
		if m = h.createHeld(t); m.state != store.StateStarting {
			return nil, nil, nil // its source's stop was not confirmed: it failed at once
		}
	} else {
		m = rapid.SampledFrom(held).Draw(t, "late")
	}
	a = h.nodeByID(h.reservation(m.ws).LeaseHolder)
	var others []*node
	for _, n := range h.nodes {
		if n != a && n.gate.get() == nodeUp {
			others = append(others, n)
		}
	}
	if a == nil || len(others) == 0 {
		t.Skip("no other node runs")
	}
	return m, a, rapid.SampledFrom(others).Draw(t, "other")
}

// actStopThenCrash has a Stop recorded that its driving node never carries
// out: the node driving a held transfer freezes, another records a Stop
// (it waits for the frozen node and times out: the request stands), the
// frozen node crashes and restarts under its own id, whose Reconcile meets
// the pending stop request: the transfer must fail with its stop
// unconfirmed (nobody can confirm the gone life's processes ended), its
// reservation taken again by the new life. (Were the lease left to lapse
// instead, the node that runs would settle the request itself, as the
// cancel step predicts.)
func (h *harness) actStopThenCrash(t *rapid.T) {
	m, a, b := h.heldElsewhere(t)
	if m == nil {
		return
	}
	h.setGate(a, nodeFrozen)
	out, err := h.stopFrozen(b, m.ws)
	if err != nil || out != engine.Timeout {
		h.fatalf("stop of %s through %s while its driving node is frozen = %s, %v; want a timeout", m.id, b.id, out, err)
	}
	m.stopRequested = true
	h.setGate(a, nodeCrashed)
	if !h.cfg.Unsteered {
		h.endProcessesOf(a)
	}
	h.await()
	h.restart(a)
	if !m.uncertain && (m.state != store.StateFailed || !m.stopUnconfirmed) {
		h.fatalf("model: %s reconciled with its stop requested is %s (stop unconfirmed %v), want failed, unconfirmed", m.id, m.state, m.stopUnconfirmed)
	}
}

// heldTarget returns the launch of starting m's target, whose readiness
// the harness holds.
func (h *harness) heldTarget(m *model) enginetest.Launch {
	got, err := h.load(m.id)
	if err != nil {
		h.fatalf("load: %v", err)
	}
	l := h.targetLaunch(m, got.TargetSession)
	if l == nil || l.Proc == nil {
		h.fatalf("handoff %s: no target launch", m.id)
	}
	return *l
}

// createHeld creates a transfer without a report whose target holds its
// readiness, on a node that runs, in a workspace where nothing is pending.
func (h *harness) createHeld(t *rapid.T) *model {
	ws := h.drawWS(t)
	if h.archived[ws] || h.pendingIn(ws) != nil || h.orphaned(ws) {
		t.Skip("the workspace is archived, busy, or its agent's node is gone")
	}
	n := h.createNode(t, ws)
	req := h.newRequest(t, ws)
	req.GenerateSummary = false
	srcCfg := h.workspaceConfig(ws)
	h.setPlan(ws, attemptPlan{target: targetHold, reportText: reportText(ws, h.nextSeq())})
	confirmed := h.scriptStop(ws, "sourceStop") || h.reapsElsewhere(ws, n)
	got, err := n.co.Create(h.ctx, req)
	if err != nil {
		h.fatalf("create %+v on %s: %v", req, n.id, err)
	}
	m := h.track(got, req, srcCfg)
	m.takenBy, m.takenLife = n, n.life
	h.settleFromStopping(m, confirmed)
	h.await()
	return m
}

// lateStale lets the frozen node's lease lapse; b reconciles (taking the
// transfer and reaping its target) and retries it.
func (h *harness) lateStale(t *rapid.T, m *model, b *node) {
	h.advance(t, leaseTTL+leaseTTL/3)
	if m.uncertain || m.state != store.StateStarting {
		return // the model lost track of it on the way: nothing to retry
	}
	h.reconcileOn(b)
	if m.state != store.StateInterrupted || m.stopUnconfirmed {
		return
	}
	h.decideOn(t, m, b, handoff.Retry)
}

// lateAfterStop has b record a stop of m (it waits for the frozen node that
// drives m, and times out), then confirms m's held target ready.
func (h *harness) lateAfterStop(m *model, b *node, target *enginetest.Process) {
	confirmed := h.scriptStop(m.ws, "cancelStop")
	out, err := h.stopFrozen(b, m.ws)
	if err != nil || out != engine.Timeout {
		h.fatalf("stop of %s through %s while its driving node is frozen = %s, %v; want a timeout", m.id, b.id, out, err)
	}
	target.Release("")
	// Once thawed, the driving node carries the stop out; the readiness
	// that arrived after the request is refused.
	if confirmed {
		m.state, m.stopUnconfirmed = store.StateCancelled, false
	} else {
		m.state, m.stopUnconfirmed = store.StateFailed, true
	}
	m.genDeadline, m.readyAt, m.readyBy = zeroTime, zeroTime, zeroTime
}

// stopFrozen has b request a stop of ws's transfer, whose driving node is
// frozen, and wait for its confirmation a short while: the outcome is a
// timeout. A store slower than that wait (a real server on a loaded
// machine) may end the call before its write is done, with ctx's error;
// a Stop is safe to repeat, so it is asked again with twice the wait, up
// to about five seconds.
func (h *harness) stopFrozen(b *node, ws baton.WorkspaceID) (engine.StopOutcome, error) {
	for wait := 20 * time.Millisecond; ; wait *= 2 {
		ctx, cancel := context.WithTimeout(h.ctx, wait)
		out, err := b.co.Stop(ctx, ws)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || wait >= 5*time.Second {
			return out, err
		}
	}
}
