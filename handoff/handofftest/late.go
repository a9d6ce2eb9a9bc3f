package handofftest

import (
	"context"
	"time"

	"pgregory.net/rapid"

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
	var held []*model
	for _, id := range h.order {
		m := h.hs[id]
		if m.state == store.StateStarting && m.readyAt.IsZero() && !m.uncertain && h.drivenByUp(m) {
			held = append(held, m)
		}
	}
	var m *model
	if len(held) == 0 {
		if m = h.createHeld(t); m.state != store.StateStarting {
			return // its source's stop was not confirmed: it failed at once
		}
	} else {
		m = rapid.SampledFrom(held).Draw(t, "late")
	}
	a := h.nodeByID(h.reservation(m.ws).LeaseHolder)
	var others []*node
	for _, n := range h.nodes {
		if n != a && n.gate.get() == nodeUp {
			others = append(others, n)
		}
	}
	if a == nil || len(others) == 0 {
		t.Skip("no other node runs")
	}
	b := rapid.SampledFrom(others).Draw(t, "other")
	l := h.heldTarget(m)
	a.gate.set(nodeFrozen)
	if rapid.Bool().Draw(t, "afterStop") {
		h.lateAfterStop(m, b, l.Proc)
		h.thaw(a, m) // the model knows where m comes to rest
		return
	}
	h.lateStale(t, m, b)
	h.thaw(a, nil)
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
	ctx, cancel := context.WithTimeout(h.ctx, 20*time.Millisecond)
	out, err := b.co.Stop(ctx, m.ws)
	cancel()
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
