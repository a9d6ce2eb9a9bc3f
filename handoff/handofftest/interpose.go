package handofftest

import (
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// interposeKind is a request the harness makes land between a commit and
// its effect, in the attempt a plan scripts: the moments the harness's
// waits for rest between steps never show.
type interposeKind int

const (
	interposeNone interposeKind = iota
	// A Stop, to any node, right after the commit that enters starting
	// (the target's launch recorded), before the driver launches it.
	interposeStopAfterCommit
	// The driving node freezes right after that commit, before it has
	// launched the target and armed its readiness timeout; the clock
	// moves on, then it thaws: the timeout still counts from the commit.
	interposeFreezeAcrossArming
	// A Stop, to any node, from inside the target's launch, after its
	// fence and before the spawn: the launch holds the workspace's launch
	// lock, so the stop is carried out once the target runs.
	interposeStopBeforeSpawn
	// The driving node crashes between the target's launch record and
	// its spawn: the record stays live, nothing runs.
	interposeCrashBeforeSpawn
)

func (k interposeKind) String() string {
	return [...]string{"none", "stop after the commit into starting", "freeze across the arming of the readiness timeout",
		"stop before the spawn", "crash before the spawn"}[k]
}

// parkedHook is a node's goroutine held at a hook until the test goroutine
// has made its request land (see interpose).
type parkedHook struct {
	kind       interposeKind
	node, life int
	ws         baton.WorkspaceID
	handoff    baton.HandoffID
	attempt    int
	launch     baton.LaunchID
	at         time.Time // the clock at the hook (the commit's time)
	resume     chan error
}

// park holds the calling node goroutine at hook kind, when the plan of
// l's workspace scripts it for this attempt, until the test goroutine
// (waiting for rest) has interposed; it returns what the hook must
// return (an error makes the engine start fail). A hook nobody handles
// within twice the rest bound goes on.
func (h *harness) park(kind interposeKind, node, life int, l store.Launch) error {
	h.mu.Lock()
	p := h.plan[l.Workspace]
	if p.interpose != kind || h.parked != nil || h.closing {
		h.mu.Unlock()
		return nil
	}
	p.interpose = interposeNone // once per attempt
	h.plan[l.Workspace] = p
	pk := &parkedHook{kind: kind, node: node, life: life, ws: l.Workspace, handoff: l.Handoff, attempt: l.Attempt,
		launch: l.ID, at: h.clk.Now(), resume: make(chan error, 1)}
	h.parked = pk
	h.mu.Unlock()
	select {
	case err := <-pk.resume:
		return err
	case <-time.After(2 * h.cfg.Wait):
		h.mu.Lock()
		mine := h.parked == pk
		if mine {
			h.parked = nil
		}
		h.mu.Unlock()
		if mine {
			return nil
		}
		return <-pk.resume // taken meanwhile: its answer comes
	}
}

// takeParked returns the hook a node is held at, if any.
func (h *harness) takeParked() *parkedHook {
	h.mu.Lock()
	defer h.mu.Unlock()
	pk := h.parked
	h.parked = nil
	return pk
}

// releaseParked lets a held hook go on, for the end of a sequence.
func (h *harness) releaseParked() {
	h.mu.Lock()
	h.closing = true
	pk := h.parked
	h.parked = nil
	h.mu.Unlock()
	if pk != nil {
		pk.resume <- nil
	}
}

// onTargetRecorded is the hook after a commit that recorded a target's
// launch (the commit into starting).
func (h *harness) onTargetRecorded(node, life int, l store.Launch) {
	for _, k := range []interposeKind{interposeStopAfterCommit, interposeFreezeAcrossArming} {
		_ = h.park(k, node, life, l)
	}
}

// onTargetSpawn is the hook inside a target's launch, before the spawn.
func (h *harness) onTargetSpawn(node int, req engine.StartRequest) error {
	life := h.nodes[node].life
	l := store.Launch{ID: req.LaunchID, Workspace: req.Workspace, Session: req.Session, Attempt: req.Attempt}
	if hf, err := h.pendingHandoff(req.Workspace); err == nil {
		l.Handoff = hf.ID
	}
	for _, k := range []interposeKind{interposeStopBeforeSpawn, interposeCrashBeforeSpawn} {
		if err := h.park(k, node, life, l); err != nil {
			return err
		}
	}
	return nil
}

func (h *harness) pendingHandoff(ws baton.WorkspaceID) (hf store.Handoff, err error) {
	err = h.raw.View(h.ctx, func(tx store.Tx) error { hf, err = pendingOf(tx, ws); return err })
	return hf, err
}

// pendingOf returns the handoff in the pending slot of ws, or an error
// matching store.ErrNotFound when the slot is free.
func pendingOf(tx store.Tx, ws baton.WorkspaceID) (store.Handoff, error) {
	p, err := tx.PendingHandoffs(ws)
	switch {
	case err != nil:
		return store.Handoff{}, err
	case len(p) == 0:
		return store.Handoff{}, fmt.Errorf("no pending handoff in %s: %w", ws, store.ErrNotFound)
	}
	return p[0], nil
}

// interpose makes the request pk's plan scripts land while pk's node is
// held at its hook, then lets it go on, and says in the model what must
// follow. It runs on the test goroutine, inside await.
func (h *harness) interpose(pk *parkedHook) {
	m := h.hs[pk.handoff]
	n := h.nodes[pk.node]
	if m == nil || m.uncertain || m.attempt != pk.attempt || n.life != pk.life || n.gate.get() != nodeUp {
		pk.resume <- nil
		return
	}
	h.log.add(fmt.Sprintf("   interpose: %s in %s (%s, attempt %d) on %s", pk.kind, pk.ws, pk.handoff, pk.attempt, n.id))
	switch pk.kind {
	case interposeStopAfterCommit, interposeStopBeforeSpawn:
		h.interposeStop(pk, m)
	case interposeFreezeAcrossArming:
		up := 0
		for _, o := range h.nodes {
			if o.gate.get() == nodeUp {
				up++
			}
		}
		if up < 2 {
			pk.resume <- nil // freezing the last node that runs: nothing lands
			return
		}
		h.setGate(n, nodeFrozen)
		pk.resume <- nil
		m.state, m.readyAt, m.readyBy = store.StateStarting, zeroTime, zeroTime
		m.armFrom, m.unspawned = pk.at, true
		// Once at rest: the clock moves while the node is frozen, then it
		// thaws and launches the target (see thaw).
		h.afterRestHooks = append(h.afterRestHooks, func() {
			h.advance(h.t, leaseTTL/3)
			if n.gate.get() == nodeFrozen && n.life == pk.life {
				h.thaw(n, nil)
			}
		})
	case interposeCrashBeforeSpawn:
		h.setGate(n, nodeCrashed)
		// The crash cuts, wherever they are, the steps the node's other
		// drivers were taking (one clock move may have set several going):
		// what they committed is only known from the store.
		for _, id := range h.order {
			if o := h.hs[id]; o != m && o.pending() && h.reservation(o.ws).LeaseHolder == n.id {
				o.uncertain = true
			}
		}
		if !h.cfg.Unsteered {
			h.endProcessesOf(n)
		}
		pk.resume <- errNodeCrashed // the spawn never happens
		// The row stays starting with its target never launched, and the
		// launch's record stays live: a Reconcile must reap it.
		m.state, m.readyAt, m.readyBy, m.genDeadline = store.StateStarting, zeroTime, zeroTime, zeroTime
		m.unspawned = true
	}
}

// interposeStop sends a Stop to a node that is up while pk's node is held
// at its hook, lets the node go on once the request is recorded, and
// predicts the cancel: confirmed unless the target was spawned and its
// stop is scripted unconfirmed.
func (h *harness) interposeStop(pk *parkedHook, m *model) {
	var up []*node
	for _, o := range h.nodes {
		if o.gate.get() == nodeUp {
			up = append(up, o)
		}
	}
	d := up[rapid.IntRange(0, len(up)-1).Draw(h.t, "interposedStopNode")]
	h.queueUncertain(m.ws)
	ctx, cancel := h.bounded()
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := d.co.Stop(ctx, m.ws)
		done <- err
	}()
	for deadline := time.Now().Add(h.cfg.Wait); ; {
		if got, err := h.load(m.id); err == nil && (got.StopRequested || got.State.Terminal()) {
			break
		}
		if time.Now().After(deadline) {
			pk.resume <- nil
			h.fatalf("a Stop of %s sent to %s was not recorded within %v", m.id, d.id, h.cfg.Wait)
		}
		time.Sleep(200 * time.Microsecond)
	}
	pk.resume <- nil
	if err := <-done; err != nil || ctx.Err() != nil {
		h.fatalf("a Stop of %s on %s landing at %q: %v (context %v)", m.id, d.id, pk.kind, err, ctx.Err())
	}
	confirmed := true // nothing runs: the target was never spawned
	for _, l := range h.eng.Launches() {
		if l.Req.LaunchID == pk.launch && !l.Failed && l.Proc != nil {
			// Spawned: a target scripted to run until stopped answers
			// the stop as scripted (see drawPlan).
			confirmed = l.Script.StopOutcome == "" || l.Script.StopOutcome.Confirmed()
		}
	}
	if confirmed {
		m.state, m.stopUnconfirmed = store.StateCancelled, false
	} else {
		m.state, m.stopUnconfirmed = store.StateFailed, true
	}
	m.genDeadline, m.readyAt, m.readyBy = zeroTime, zeroTime, zeroTime
}

// actSlowStop stops a transfer whose report-only turn or target runs on
// the node that drives it, with an engine that does not answer the stop
// until it is given up on: the Stop must not answer before the stop
// timeout (on the clock) has run out, and then answers engine.Timeout,
// the transfer failed with its stop unconfirmed and the process still
// running. (The scripted engine answers every stop at once.)
func (h *harness) actSlowStop(t *rapid.T) {
	var cands []*model
	for _, id := range h.order {
		m := h.hs[id]
		if !m.pending() || m.uncertain || (m.state != store.StateGenerating && m.state != store.StateStarting) || !h.drivenByUp(m) {
			continue
		}
		d := h.nodeByID(h.reservation(m.ws).LeaseHolder)
		if procs := h.runningProcs(m.ws); len(procs) == 1 && h.launchedBy(procs[0].N()) == d {
			cands = append(cands, m)
		}
	}
	if len(cands) == 0 {
		t.Skip("no transfer whose process runs on the node that drives it")
	}
	m := cands[rapid.IntRange(0, len(cands)-1).Draw(t, "slowStopped")]
	d := h.nodeByID(h.reservation(m.ws).LeaseHolder)
	p := h.runningProcs(m.ws)[0]
	id := p.Request().LaunchID
	h.mu.Lock()
	h.slowStops[id] = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.slowStops, id)
		h.mu.Unlock()
	}()
	n := h.drawUp(t)
	h.queueUncertain(m.ws)
	armed := d.clk.stopsArmed()
	ctx, cancel := h.bounded()
	defer cancel()
	type answer struct {
		out engine.StopOutcome
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := n.co.Stop(ctx, m.ws)
		done <- answer{out, err}
	}()
	for deadline := time.Now().Add(h.cfg.Wait); d.clk.stopsArmed() == armed; {
		if time.Now().After(deadline) {
			h.fatalf("a stop of %s's process (launch %d) sent to %s: %s armed no stop timeout within %v", m.id, p.N(), n.id, d.id, h.cfg.Wait)
		}
		time.Sleep(200 * time.Microsecond)
	}
	select {
	case a := <-done:
		h.fatalf("a Stop of %s on %s answered %s (%v) before its stop timeout ran out", m.id, n.id, a.out, a.err)
	default:
	}
	m.state, m.stopUnconfirmed = store.StateFailed, true
	m.genDeadline, m.readyAt, m.readyBy = zeroTime, zeroTime, zeroTime
	h.advance(t, stopTimeout)
	a := <-done
	if a.err != nil || ctx.Err() != nil || a.out != engine.Timeout {
		h.fatalf("a slow stop of %s on %s answered %s, %v (context %v); want %s once its stop timeout ran out", m.id, n.id, a.out, a.err, ctx.Err(), engine.Timeout)
	}
	if !p.Running() {
		h.fatalf("a slow stop of %s ended its process (launch %d), which never answered it", m.id, p.N())
	}
	h.await()
}
