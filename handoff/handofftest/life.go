package handofftest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

var zeroTime time.Time

// actAdvance moves the shared clock: generation timeouts and delayed
// readiness fall due, leases are renewed by the nodes that run.
func (h *harness) actAdvance(t *rapid.T) {
	h.advance(t, rapid.SampledFrom([]time.Duration{leaseTTL / 3, genTimeout}).Draw(t, "advance"))
}

// advance moves the clock by total in steps of a third of the lease TTL,
// predicting at each step what falls due on the nodes that run, and waiting
// for their lease renewals (a node that runs never loses its lease to a
// clock jump).
func (h *harness) advance(t *rapid.T, total time.Duration) {
	for step := leaseTTL / 3; total > 0; total -= step {
		d := min(step, total)
		to := h.clk.Now().Add(d)
		confirmed := map[*model]bool{}
		var due []*model
		for _, id := range h.order {
			m := h.hs[id]
			if m.uncertain || !m.pending() || !h.drivenByUp(m) {
				continue
			}
			switch {
			case m.state == store.StateGenerating && !m.genDeadline.After(to):
				confirmed[m] = h.scriptStop(m.ws, "generationStop")
				due = append(due, m)
			case m.state == store.StateStarting && !m.readyAt.IsZero() && !m.readyAt.After(to):
				due = append(due, m)
			case m.state == store.StateStarting && !m.readyBy.IsZero() && !m.readyBy.After(to):
				confirmed[m] = h.scriptStop(m.ws, "readinessStop")
				due = append(due, m)
			}
		}
		h.advanceClock(d)
		for _, m := range due {
			switch {
			case m.state == store.StateStarting && !m.readyAt.IsZero() && !m.readyAt.After(to):
				m.state, m.readyAt, m.readyBy = store.StateCompleted, zeroTime, zeroTime
			case m.state == store.StateStarting: // readiness timed out
				m.state, m.stopUnconfirmed, m.readyBy = store.StateFailed, !confirmed[m], zeroTime
			case confirmed[m] && m.report != "":
				m.genDeadline = zeroTime
				h.settleFromStarting(m)
			default:
				m.state, m.stopUnconfirmed, m.genDeadline = store.StateFailed, m.stopUnconfirmed || !confirmed[m], zeroTime
			}
		}
		h.awaitLeases()
		h.await()
	}
}

// awaitLeases waits until every node that runs has renewed the leases it
// holds past the current time.
func (h *harness) awaitLeases() {
	h.t.Helper()
	deadline := time.Now().Add(h.cfg.Wait)
	for {
		stale := ""
		now := h.clk.Now()
		for _, ws := range h.wss {
			r := h.reservation(ws)
			if !r.Held {
				continue
			}
			for _, n := range h.nodes {
				if n.id == r.LeaseHolder && n.gate.get() == nodeUp && !r.LeaseExpires.After(now.Add(leaseTTL/3)) {
					stale = fmt.Sprintf("%s's lease held by %s (life %d) for %s until %v, epoch %d, store %q, now %v, pending clock timers %d", ws, n.id, n.life, r.Handoff, r.LeaseExpires, r.Epoch, r.LeaseStore, now, h.clk.Pending())
				}
			}
		}
		if stale == "" {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			var keep []string
			for _, g := range strings.Split(string(buf), "\n\n") {
				if strings.Contains(g, "renewLoop") {
					keep = append(keep, g)
				}
			}
			h.fatalf("lease not renewed after %v: %s\n%s", h.cfg.Wait, stale, strings.Join(keep, "\n\n"))
		}
		time.Sleep(200 * time.Microsecond) // a bounded poll for the renewal goroutines
	}
}

// actFreeze pauses a node: every store and engine call it makes waits. Its
// leases lapse once the clock moves on; another node's Reconcile may then
// take its transfers over.
func (h *harness) actFreeze(t *rapid.T) {
	n := h.drawUp(t)
	up := 0
	for _, o := range h.nodes {
		if o.gate.get() == nodeUp {
			up++
		}
	}
	if up < 2 {
		t.Skip("freezing the last node that runs")
	}
	h.setGate(n, nodeFrozen)
}

// actThaw resumes a frozen node: what it was doing goes on, late. Its
// callbacks of attempts another node took over must be refused; the model
// cannot tell where its own transfers come to rest, so it checks they rest
// somewhere legal and adopts it.
func (h *harness) actThaw(t *rapid.T) {
	h.thaw(h.drawNode(t, "frozen", nodeFrozen), nil)
}

// thaw resumes frozen node n; the model is sure only of exact.
//
// A transfer n froze on right after its commit into starting
// (interposeFreezeAcrossArming) is certain when n still holds it at the
// epoch the model counts, its lease not lapsed: n now launches the target,
// whose readiness timeout counts from that commit, not from the thaw.
func (h *harness) thaw(n *node, exact *model) {
	for _, id := range h.order {
		m := h.hs[id]
		if m == exact || !m.pending() {
			continue
		}
		r := h.reservation(m.ws)
		if r.LeaseHolder != n.id {
			continue
		}
		armFrom := m.armFrom
		m.armFrom, m.unspawned = zeroTime, false
		if !armFrom.IsZero() && !m.uncertain && m.state == store.StateStarting && r.Held && r.Handoff == m.id && r.Epoch == h.epoch[m.ws] &&
			r.LeaseExpires.After(h.clk.Now()) && m.takenBy == n && m.takenLife == n.life {
			h.settleFromStarting(m)
			if m.state == store.StateStarting {
				m.readyBy = armFrom.Add(readyTimeout)
			}
			continue
		}
		m.uncertain = true
	}
	h.setGate(n, nodeUp)
	h.awaitLeases()
	h.await()
}

// actCrash kills a node without Shutdown: its calls fail from now on, its
// Coordinator is abandoned, and the agent processes it launched keep
// running (nothing reaps them but a Reconcile that can).
func (h *harness) actCrash(t *rapid.T) {
	n := h.drawUp(t)
	h.setGate(n, nodeCrashed)
	if !h.cfg.Unsteered {
		// The host died and took its agent processes with it.
		h.endProcessesOf(n)
		h.await()
	}
}

// endProcessesOf ends every process node n launched in its current life
// that still runs, as if each had ended on its own.
func (h *harness) endProcessesOf(n *node) {
	for _, ws := range h.wss {
		for _, p := range h.runningProcs(ws) {
			if h.launchedBy(p.N()) == n {
				p.Finish(-1, errProcessGone)
			}
		}
	}
}

var errProcessGone = errors.New("handofftest: the agent process ended with its host")

// actShutdown shuts a node down gracefully, with no Reconcile after it:
// its pending transfers become interrupted, their source restored and
// their reservation kept; a transfer whose stop was confirmed is not marked
// stop-unconfirmed.
func (h *harness) actShutdown(t *rapid.T) {
	n := h.drawUp(t)
	var mine []*model
	confirmed := map[*model]bool{}
	for _, id := range h.order {
		m := h.hs[id]
		if !m.pending() {
			continue
		}
		if r := h.reservation(m.ws); r.Held && r.LeaseHolder == n.id {
			// Shutdown confirms only what this node runs; a process of
			// another node left running keeps the stop unconfirmed.
			elsewhere := h.runsElsewhere(m.ws, n)
			scripted := h.scriptStop(m.ws, "shutdownStop")
			switch {
			case !h.cfg.Unsteered:
				confirmed[m] = scripted && !elsewhere
				if elsewhere {
					m.uncertain = true // see Unsteered: Shutdown may clear the flag
				}
			case h.runsHere(m.ws, n):
				// Another node's process is reaped only once this
				// node's own stop is confirmed.
				confirmed[m] = scripted
			default:
				// Nothing runs here: another node's process is
				// reaped through the shared engine.Reaper.
				confirmed[m] = true
			}
			if !m.uncertain {
				mine = append(mine, m)
			}
		}
	}
	// A process whose stop is not confirmed keeps Shutdown waiting for it
	// until ctx ends: then Shutdown must say so, having settled the
	// transfers all the same.
	unconfirmed := false
	for _, ws := range h.wss {
		for _, p := range h.runningProcs(ws) {
			if h.launchedBy(p.N()) == n && !p.StopOutcome().Confirmed() {
				unconfirmed = true
			}
		}
	}
	for _, c := range confirmed {
		unconfirmed = unconfirmed || !c
	}
	before := h.describeProcs()
	ctx, cancel := h.bounded()
	if unconfirmed {
		cancel()
		ctx, cancel = context.WithTimeout(h.ctx, 50*time.Millisecond)
	}
	defer cancel()
	if err := n.co.Shutdown(ctx); err != nil && !(unconfirmed && errors.Is(err, context.DeadlineExceeded)) {
		h.fatalf("shutdown of %s (life %d, unconfirmed %v, before: %s): %v (processes running: %s)", n.id, n.life, unconfirmed, before, err, h.describeProcs())
	}
	h.setGate(n, nodeDown)
	if !h.cfg.Unsteered {
		// The host exits; the agent processes whose stop was not
		// confirmed go with it. Their ends are turns that end on their
		// own: their settles may fire the context-pressure policy, which
		// the shut-down node cannot act on (a restart or another node's
		// Reconcile must).
		var due []*pressureSettle
		for _, ws := range h.wss {
			for _, p := range h.runningProcs(ws) {
				if h.launchedBy(p.N()) == n {
					if s := h.settleOf(ws, p); s != nil {
						due = append(due, s)
					}
				}
			}
		}
		for _, s := range due {
			h.settled(t, s)
		}
		h.endProcessesOf(n)
		if unconfirmed {
			// The Shutdown cut short left the goroutines watching those
			// processes: they record the ends now, as the exiting host
			// would. Wait for them (Close is idempotent), or their
			// writes would land in a later step.
			wctx, wcancel := h.bounded()
			err := n.co.Sessions().Close(wctx)
			wcancel()
			if err != nil {
				h.fatalf("%s's session watchers did not finish after its processes ended: %v", n.id, err)
			}
		}
	}
	for _, m := range mine {
		m.state, m.stopUnconfirmed = store.StateInterrupted, !confirmed[m]
		m.genDeadline, m.readyAt, m.readyBy = zeroTime, zeroTime, zeroTime
	}
	h.await()
	h.quiesce(t)
}

// actRestart starts a crashed or shut-down node again, with its instance
// id, and runs Reconcile on it as a restart does.
func (h *harness) actRestart(t *rapid.T) {
	h.restart(h.drawNode(t, "restarted", nodeCrashed, nodeDown))
}

// restart starts crashed or shut-down node n again and reconciles there.
func (h *harness) restart(n *node) {
	g := newGate()
	h.mu.Lock()
	n.dead = append(n.dead, n.co)
	n.gate = g // the old life keeps its own gate, shut for good
	n.life++
	h.mu.Unlock()
	delete(h.goneAt, n.id) // its new life renews the leases it holds
	co := h.newCoordinator(n)
	h.mu.Lock()
	n.co = co
	h.mu.Unlock()
	if !h.cfg.Unsteered {
		// The host ends the session rows of the processes its previous
		// life ran, all gone now (baton keeps no record of which node ran
		// a session: a multi-node host must).
		h.endRowsOfPreviousLife(n)
	}
	if len(h.nodes) == 1 && rapid.Bool().Draw(h.t, "recover") {
		// A process that serves its store alone restarts with Recover.
		h.recoverOn(n)
		return
	}
	h.reconcileOn(n)
}

// actReconcile sends Reconcile to a node that drives nothing active (it is
// the start-up call: a node never reconciles the transfers it is driving).
func (h *harness) actReconcile(t *rapid.T) {
	n := h.drawUp(t)
	if why := h.mayReconcile(n); why != "" {
		t.Skip(why)
	}
	h.reconcileOn(n)
}

// mayReconcile says why node n is not sent Reconcile, "" when it may be.
func (h *harness) mayReconcile(n *node) string {
	for _, id := range h.order {
		m := h.hs[id]
		if m.pending() && (m.uncertain || activeState(m.state)) && h.reservation(m.ws).LeaseHolder == n.id {
			return "the node drives an active transfer"
		}
		if !h.cfg.Unsteered && m.pending() && h.reservation(m.ws).LeaseHolder == n.id && h.runsHere(m.ws, n) {
			// See Unsteered: Reconcile on the node that still runs the
			// transfer's process would call its stop confirmed.
			return "the node still runs a process of its transfer"
		}
	}
	return ""
}

// actTakeOver crashes the node that drives a transfer, lets the clock run
// past its lease, and sends Reconcile to a surviving node: the survivor
// must take the transfer over (interrupted, the reservation taken again),
// holding its lease from now for one TTL. (As single steps, a crash, a
// lapse and a Reconcile elsewhere line up too rarely.)
func (h *harness) actTakeOver(t *rapid.T) {
	var cands []*model
	for _, id := range h.order {
		m := h.hs[id]
		if m.pending() && !m.uncertain && m.takenBy != nil && m.takenBy.life == m.takenLife && m.takenBy.gate.get() == nodeUp &&
			h.reservation(m.ws).LeaseHolder == m.takenBy.id {
			cands = append(cands, m)
		}
	}
	if len(cands) == 0 {
		t.Skip("no transfer driven by a node that is up")
	}
	m := cands[rapid.IntRange(0, len(cands)-1).Draw(t, "takenOver")]
	a := m.takenBy
	var others []*node
	for _, n := range h.nodes {
		if n != a && n.gate.get() == nodeUp && h.mayReconcile(n) == "" {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		t.Skip("no other node may reconcile")
	}
	b := others[rapid.IntRange(0, len(others)-1).Draw(t, "survivor")]
	h.log.add(fmt.Sprintf("   takeover: %s crashes with %s (%s); %s reconciles once its lease lapsed", a.id, m.id, m.state, b.id))
	h.setGate(a, nodeCrashed)
	if !h.cfg.Unsteered {
		h.endProcessesOf(a)
		h.await()
	}
	h.advance(t, leaseTTL+leaseTTL/3)
	if h.mayReconcile(b) != "" || m.uncertain || !m.pending() {
		return // the clock's move changed what b drives, or where m is
	}
	h.reconcileOn(b)
	if m.uncertain || m.state != store.StateInterrupted {
		return
	}
	if r := h.reservation(m.ws); r.LeaseHolder != b.id || !r.LeaseExpires.Equal(h.clk.Now().Add(leaseTTL)) {
		h.fatalf("invariant 8: %s taken over from %s by %s: lease held by %q until %s, want %s until %s",
			m.id, a.id, b.id, r.LeaseHolder, r.LeaseExpires.Format("15:04:05"), b.id, h.clk.Now().Add(leaseTTL).Format("15:04:05"))
	}
}

func activeState(s store.HandoffState) bool {
	return s == store.StateStopping || s == store.StateGenerating || s == store.StateStarting
}

// reconcileOn runs Reconcile on n and predicts it: its own transfers are
// interrupted at once (certain when nothing of them may still run), other
// nodes' live leases are left alone, and lapsed ones are taken over
// (interrupted, or failed with the stop unconfirmed when the dead node's
// processes may still run: the model adopts either). It launches nothing.
//
// Sometimes the engine's reaper cannot confirm anything during the
// Reconcile (engine.Timeout or engine.Failed, with or without an error):
// then a transfer taken over whose workspace has a live launch record of
// another node or life is interrupted with its stop unconfirmed, and each
// such record stays live (an unconfirmed reap closes nothing, and a
// settling closes no other node's record).
func (h *harness) reconcileOn(n *node) { h.reconcileVia(n, false) }

// recoverOn runs Recover on n, the restart call of a process that serves
// its store alone, and predicts it as reconcileOn does: it reaps every
// launch an earlier life left live, in every workspace, before it
// reconciles (whatever it cannot confirm gone stays live and keeps its
// transfer's stop unconfirmed).
func (h *harness) recoverOn(n *node) { h.reconcileVia(n, true) }

func (h *harness) reconcileVia(n *node, viaRecover bool) {
	now := h.clk.Now()
	rs := h.drawReap("reconcileReap")
	// The context-pressure transfers a crash or a shutdown left due are
	// created last (their attempts scripted when they fired), and start as
	// any new transfer does: its stop must then confirm what it reaps.
	due := h.settlesDue()
	if len(due) > 0 {
		rs = reapScript{}
	}
	held := map[baton.WorkspaceID][]baton.LaunchID{}
	var takenOver []*model
	if rs.out != "" {
		for _, ws := range h.wss {
			held[ws] = h.othersLive(ws, n)
		}
		if h.anyRunning(held) {
			// A process an unconfirmed reap leaves running would run on
			// under a transfer its own node may later reconcile as
			// confirmed (see Unsteered): only records whose process is
			// gone, or never ran, are left unconfirmed here.
			rs, held = reapScript{}, map[baton.WorkspaceID][]baton.LaunchID{}
		}
	}
	for _, id := range h.order {
		m := h.hs[id]
		if !m.pending() {
			continue
		}
		r := h.reservation(m.ws)
		switch {
		case r.LeaseHolder != n.id && r.LeaseExpires.After(now):
			// Another live process drives it: left alone.
		case r.LeaseHolder == n.id && m.takenBy == n && m.takenLife == n.life:
			// This Coordinator took it itself: its own Reconcile leaves it.
		case m.uncertain:
		default:
			// Its own lease, or a lapsed one: what the gone process
			// launched there is reaped (the scripted engine is a Reaper),
			// so the stop is confirmed; but a stop requested of the gone
			// process is not confirmed by anyone: failed, unconfirmed.
			m.state, m.stopUnconfirmed = store.StateInterrupted, len(held[m.ws]) > 0
			if m.stopRequested {
				m.state, m.stopUnconfirmed = store.StateFailed, true
			}
			m.stopRequested = false
			m.genDeadline, m.readyAt, m.readyBy = zeroTime, zeroTime, zeroTime
			h.took(m.ws, string(m.id))
			m.takenBy, m.takenLife = n, n.life
			takenOver = append(takenOver, m)
		}
	}
	since := len(h.eng.Launches())
	ctx, cancel := h.bounded()
	defer cancel()
	disarm := h.armReap(rs)
	var err error
	if viaRecover {
		var rec handoff.Recovery
		rec, err = n.co.Recover(ctx)
		if err == nil && rs.out == "" && len(rec.Held) > 0 {
			h.fatalf("invariant 2 (reaps): Recover on %s held %d launches although every reap confirmed", n.id, len(rec.Held))
		}
	} else {
		_, err = n.co.Reconcile(ctx)
	}
	disarm()
	if err != nil {
		h.fatalf("reconcile on %s (Recover %v): %v", n.id, viaRecover, err)
	}
	var fresh []*model
	for _, s := range due {
		fresh = append(fresh, h.awaitCreated(s, "a Reconcile on "+n.id))
	}
	h.stillLive("a Reconcile on "+n.id+" whose reaps were not confirmed", held)
	if viaRecover && rs.out == "" {
		// Every launch another life left live was reaped, confirmed.
		for _, ws := range h.wss {
			if left := h.othersLive(ws, n); len(left) > 0 {
				h.fatalf("invariant 2 (reaps): Recover on %s confirmed every reap, yet launches %v of an earlier life are still live in %s", n.id, left, ws)
			}
		}
	}
	h.await()
	// A transfer taken over with its stop unconfirmed is sometimes
	// cancelled at once on the node that took it, whose stop must reap
	// the records left live there, and whose reaper cannot confirm them
	// either: failed again, the records still live.
	for _, m := range takenOver {
		if len(held[m.ws]) > 0 && m.pending() && !m.uncertain && n.gate.get() == nodeUp && rapid.IntRange(0, 2).Draw(h.t, "cancelHeld") == 0 {
			h.reapNext = true
			h.cancel(h.t, m, func(ctx context.Context) error { _, err := n.co.Stop(ctx, m.ws); return err })
			h.reapNext = false
		}
	}
	// A transfer taken over with its stop confirmed had every launch of
	// its workspace confirmed gone (reaped): none another node or life
	// made is left live there.
	for _, m := range takenOver {
		if m.uncertain || m.stopUnconfirmed || !m.pending() {
			continue
		}
		if left := h.othersLive(m.ws, n); len(left) > 0 {
			h.fatalf("invariant 2 (reaps): Reconcile on %s took %s over with its stop confirmed, yet launches %v of another node or life are still live in %s", n.id, m.id, left, m.ws)
		}
	}
	// (What the context-pressure transfers it created launch is theirs: a
	// new transfer's.)
	if got := h.transferLaunchesSince(since, fresh); got > 0 {
		h.fatalf("invariant 3: Reconcile on %s launched %d engine processes for transfers", n.id, got)
	}
}

// launchedBy returns the node (in its current life) that made launch n,
// nil when that life is over or the launch is unknown.
func (h *harness) launchedBy(n int) *node {
	li, ok := h.launchOf(n)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ok || h.nodes[li.node].life != li.life {
		return nil
	}
	return h.nodes[li.node]
}

// launchOf returns the node and life that made launch n. A launch is known
// by its LaunchID from the moment its Start is called, and by its number
// once Start returns: the scripted engine's callbacks can settle a
// transfer, and a step end, before Start returns.
func (h *harness) launchOf(n int) (launchInfo, bool) {
	h.mu.Lock()
	li, ok := h.launchNode[n]
	h.mu.Unlock()
	if ok {
		return li, true
	}
	for _, l := range h.eng.Launches() {
		if l.N == n && l.Req.LaunchID != "" {
			h.mu.Lock()
			li, ok = h.launchID[l.Req.LaunchID]
			h.mu.Unlock()
			return li, ok
		}
	}
	return launchInfo{}, false
}

// endRowsOfPreviousLife records the end of every session row still running
// whose process node n launched in an earlier life.
func (h *harness) endRowsOfPreviousLife(n *node) {
	type last struct {
		launchInfo
		id baton.LaunchID
	}
	lasts := map[baton.SessionID]last{}
	for _, l := range h.eng.Launches() {
		if l.Failed || l.Req.Turn != transcript.Normal {
			continue
		}
		li, ok := h.launchOf(l.N)
		if ok {
			lasts[l.Req.Session] = last{li, l.Req.LaunchID}
		}
	}
	for id, li := range lasts {
		if li.node != n.idx || li.life == n.life {
			continue
		}
		if s, err := h.session(id); err == nil && s.Status == store.SessionRunning {
			supervisorOf(n.co).RecordEnd(id, li.id, engine.ExitStatus{Err: errProcessGone, At: h.clk.Now()})
		}
	}
}

// runsElsewhere reports whether a process runs in ws that node n (in its
// current life) did not launch.
func (h *harness) runsElsewhere(ws baton.WorkspaceID, n *node) bool {
	for _, p := range h.runningProcs(ws) {
		if h.launchedBy(p.N()) != n {
			return true
		}
	}
	return false
}

// runsHere reports whether node n (in its current life) runs a process in
// ws.
func (h *harness) runsHere(ws baton.WorkspaceID, n *node) bool {
	for _, p := range h.runningProcs(ws) {
		if h.launchedBy(p.N()) == n {
			return true
		}
	}
	return false
}

// describeProcs lists the running processes: launch number, workspace,
// the node and life that launched it, and the outcome its next stop gets.
func (h *harness) describeProcs() string {
	var b strings.Builder
	for _, ws := range h.wss {
		for _, p := range h.runningProcs(ws) {
			li, ok := h.launchOf(p.N())
			by := "unknown"
			if ok {
				by = fmt.Sprintf("%s life %d", h.nodes[li.node].id, li.life)
			}
			fmt.Fprintf(&b, "[#%d %s by %s, stop %s] ", p.N(), ws, by, p.StopOutcome())
		}
	}
	return b.String()
}

// transferLaunchesSince counts the engine's launches for transfers
// (report-only turns and targets) from launch index since on, but those
// of the new transfers fresh: a restart may deliver a queued instruction,
// never relaunch a transfer.
func (h *harness) transferLaunchesSince(since int, fresh []*model) int {
	theirs := map[baton.HandoffID]bool{}
	targets := map[baton.SessionID]bool{}
	for _, m := range fresh {
		theirs[m.id] = true
		if got, err := h.load(m.id); err == nil {
			targets[got.TargetSession] = true
			for _, a := range got.History {
				targets[a.TargetSession] = true
			}
		}
	}
	n := 0
	for _, l := range h.eng.Launches()[since:] {
		switch {
		case l.Req.Report != nil && theirs[l.Req.Report.Handoff], l.Req.Report == nil && l.Req.Attempt > 0 && targets[l.Req.Session]:
		case l.Req.Report != nil || l.Req.Attempt > 0:
			n++
		}
	}
	return n
}
