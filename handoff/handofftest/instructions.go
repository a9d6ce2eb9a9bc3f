package handofftest

import (
	"context"
	"fmt"
	"strings"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// instr is the model of one queued instruction (session.Service.Message).
type instr struct {
	id    baton.InstructionID
	ws    baton.WorkspaceID
	state store.InstructionState
}

// The model of the instruction queue, the harness's own reading of
// Message's documentation:
//
//   - a message is refused while a transfer holds the workspace (nothing is
//     queued) and in an archived workspace;
//   - it is queued pending while a process runs in the workspace or older
//     instructions still wait, else delivered at once as a new turn;
//   - when a turn ends on its own in a workspace no transfer holds, the
//     oldest pending instruction is delivered (a Stop keeps the queue as it
//     is, as does DeliverPending while something runs);
//   - a delivered instruction cannot be cancelled, a cancelled one cannot be
//     resent, and neither changes on its own; a resent one is pending again
//     and delivered at once when nothing runs.
//
// Where a turn may end at a moment the model cannot place against a
// release of the reservation (a transfer cancelled while its target ran, a
// node crashing or coming back, a clock move), the workspace's queue is
// uncertain: the harness then checks only that no instruction went back
// (a cancelled or delivered one changed, one appeared or vanished) and
// adopts the rest, until the queue has nothing open.

// stepsKeepingQueue are the steps that end no process in a workspace no
// transfer holds, or whose effect on the queue the model predicts (a Stop
// with no transfer pending: see actStop).
var stepsKeepingQueue = map[string]bool{
	"": true, "message": true, "cancelInstruction": true, "resendInstruction": true, "turnEnds": true, "deliverPending": true, "queueBurst": true,
	"replay": true, "mismatch": true, "createStale": true, "createMalformed": true,
	"unknownWorkspace": true, "decideBad": true, "lateReport": true, "invalidReport": true,
	"wakeup": true, "archive": true, "stop": true, "setPressure": true,
}

// beforeStep draws the usage the next ordinary turns report, and marks
// the queues a step may move where the model cannot tell.
func (h *harness) beforeStep(name string) {
	h.drawUsages(h.t)
	if stepsKeepingQueue[name] {
		return
	}
	for _, ws := range h.wss {
		h.queueUncertain(ws)
	}
}

// queueUncertain marks ws's queue uncertain when it has open instructions.
func (h *harness) queueUncertain(ws baton.WorkspaceID) {
	if len(h.openInstrs(ws)) > 0 && !h.instrUncertain[ws] {
		h.instrUncertain[ws] = true
		h.log.add(fmt.Sprintf("   model: %s's instruction queue uncertain", ws))
	}
}

func (h *harness) openInstrs(ws baton.WorkspaceID) []*instr {
	var out []*instr
	for _, i := range h.instrs {
		if i.ws == ws && i.state.Open() {
			out = append(out, i)
		}
	}
	return out
}

// oldestPending returns ws's oldest pending instruction in the model.
func (h *harness) oldestPending(ws baton.WorkspaceID) *instr {
	for _, i := range h.instrs {
		if i.ws == ws && i.state == store.InstructionPending {
			return i
		}
	}
	return nil
}

// nothingRuns reports whether no process of ws runs or may run (no live
// launch record, no session row a gone node left running).
func (h *harness) nothingRuns(ws baton.WorkspaceID) bool {
	return len(h.runningProcs(ws)) == 0 && !h.liveLaunchIn(ws) && !h.staleRow(ws)
}

// deliverOldest predicts the delivery of ws's oldest pending instruction,
// when a turn ends or a Message or resend finds nothing running.
func (h *harness) deliverOldest(ws baton.WorkspaceID) {
	if i := h.oldestPending(ws); i != nil && !h.archived[ws] && h.pendingIn(ws) == nil && h.dueIn(ws) == nil {
		i.state = store.InstructionDelivered
		h.movedOn[ws] = true
		h.log.add(fmt.Sprintf("   model: instruction %s delivered", i.id))
	}
}

// queueNode is the node an instruction call for ws goes to: the one that
// runs the workspace's agent (steered), any node that is up (Unsteered).
// It skips the step when a process of a gone node may run there.
func (h *harness) queueNode(t *rapid.T, ws baton.WorkspaceID) *node {
	if h.orphaned(ws) || h.staleRow(ws) {
		t.Skip("a process of a node that is not up may run in the workspace")
	}
	if h.cfg.Unsteered {
		return h.drawUp(t)
	}
	n := h.runsOn(ws)
	if n.gate.get() != nodeUp {
		t.Skip("the node running the workspace is not up")
	}
	return n
}

// actMessage sends a message to a workspace's agent.
func (h *harness) actMessage(t *rapid.T) {
	ws := h.drawWS(t)
	h.message(ws, h.queueNode(t, ws))
}

// message sends a message to ws through node n and predicts it.
func (h *harness) message(ws baton.WorkspaceID, n *node) {
	text := "message " + itoa(h.nextSeq())
	switch {
	case h.archived[ws]:
		h.unchanged("message in an archived workspace", func() {
			_, err := n.co.Sessions().Message(h.ctx, ws, text)
			expectErr(h, "message in an archived workspace", err, session.ErrArchived)
		})
		return
	case h.pendingIn(ws) != nil:
		h.unchanged("message while a transfer holds the workspace", func() {
			_, err := n.co.Sessions().Message(h.ctx, ws, text)
			expectErr(h, "message while a transfer holds the workspace", err, session.ErrWorkspaceBusy)
		})
		return
	}
	idle := h.nothingRuns(ws)
	older := h.oldestPending(ws) != nil
	resumes := h.implicitResume(ws)
	ctx, cancel := h.bounded()
	defer cancel()
	got, err := n.co.Sessions().Message(ctx, ws, text)
	if err != nil {
		h.fatalf("message to %s on %s: %v", ws, n.id, err)
	}
	i := &instr{id: got.ID, ws: ws, state: store.InstructionPending}
	h.instrs = append(h.instrs, i)
	if h.instrUncertain[ws] {
		i.state = got.State
	} else if idle {
		h.deliverOldest(ws) // this one, unless older ones wait
		if got.State != i.state {
			h.fatalf("instruction queue: message %s to %s (nothing running, older pending %v) returned %s, model %s", got.ID, ws, older, got.State, i.state)
		}
		if !older {
			h.checkImplicit(ws, "a message's turn", resumes, got.Session)
		}
	} else if got.State != store.InstructionPending {
		h.fatalf("instruction queue: message %s to %s while a process runs there returned %s, want pending", got.ID, ws, got.State)
	}
	h.await()
}

// drawInstr draws an instruction the harness sent.
func (h *harness) drawInstr(t *rapid.T) *instr {
	if len(h.instrs) == 0 {
		t.Skip("no instruction yet")
	}
	return rapid.SampledFrom(h.instrs).Draw(t, "instruction")
}

// actCancelInstruction withdraws an instruction.
func (h *harness) actCancelInstruction(t *rapid.T) {
	i := h.drawInstr(t)
	n := h.drawUp(t)
	if h.instrUncertain[i.ws] && i.state.Open() && h.pendingIn(i.ws) == nil {
		t.Skip("the model does not know whether it was delivered")
	}
	h.cancelInstr(i, n)
}

// cancelInstr withdraws instruction i through node n and predicts it.
func (h *harness) cancelInstr(i *instr, n *node) {
	call := func() (store.Instruction, error) { return n.co.Sessions().CancelInstruction(h.ctx, i.ws, i.id) }
	switch {
	case h.pendingIn(i.ws) != nil:
		h.unchanged("cancel of an instruction while a transfer holds the workspace", func() {
			_, err := call()
			expectErr(h, "cancel of an instruction while a transfer holds the workspace", err, session.ErrWorkspaceBusy)
		})
	case i.state == store.InstructionDelivered:
		h.unchanged("cancel of a delivered instruction", func() {
			_, err := call()
			expectErr(h, "cancel of a delivered instruction", err, baton.ErrConflict)
		})
	case i.state == store.InstructionCancelled:
		h.unchanged("cancel of a cancelled instruction", func() {
			if got, err := call(); err != nil || got.State != store.InstructionCancelled {
				h.fatalf("cancel of cancelled instruction %s: %s, %v", i.id, got.State, err)
			}
		})
	default:
		got, err := call()
		if err != nil || got.State != store.InstructionCancelled {
			h.fatalf("cancel of %s instruction %s: %s, %v", i.state, i.id, got.State, err)
		}
		i.state = store.InstructionCancelled
		h.await()
	}
}

// actResendInstruction resends an instruction.
func (h *harness) actResendInstruction(t *rapid.T) {
	i := h.drawInstr(t)
	n := h.queueNode(t, i.ws)
	if h.instrUncertain[i.ws] && i.state != store.InstructionCancelled && h.pendingIn(i.ws) == nil {
		t.Skip("the model does not know where the queue stands")
	}
	h.resendInstr(i, n, false)
}

// resendInstr resends instruction i through node n and predicts it; quiet
// leaves the step's await to the caller.
func (h *harness) resendInstr(i *instr, n *node, quiet bool) {
	call := func() (store.Instruction, error) {
		ctx, cancel := h.bounded()
		defer cancel()
		return n.co.Sessions().ResendInstruction(ctx, i.ws, i.id)
	}
	switch {
	case h.pendingIn(i.ws) != nil:
		h.unchanged("resend of an instruction while a transfer holds the workspace", func() {
			_, err := call()
			expectErr(h, "resend of an instruction while a transfer holds the workspace", err, session.ErrWorkspaceBusy)
		})
		return
	case i.state == store.InstructionCancelled:
		h.unchanged("resend of a cancelled instruction", func() {
			_, err := call()
			expectErr(h, "resend of a cancelled instruction", err, baton.ErrConflict)
		})
		return
	}
	idle := h.nothingRuns(i.ws)
	got, err := call()
	if err != nil {
		h.fatalf("resend of %s instruction %s: %v", i.state, i.id, err)
	}
	i.state = store.InstructionPending
	if idle {
		h.deliverOldest(i.ws)
	}
	if got.State != i.state {
		h.fatalf("instruction queue: resend of %s (nothing running %v) returned %s, model %s", i.id, idle, got.State, i.state)
	}
	if !quiet {
		h.await()
	}
}

// deliveryInFlight says which instruction of ws a delivery has launched
// and not yet settled, "" when none: a queued instruction a turn's end
// delivers (in the background, not in any step) is unknown from its
// launch until that turn's readiness is recorded and the instruction
// settled delivered. Once its scripted readiness has resolved, on a node
// that still runs the life that launched it, both writes are on their
// way, and a step begun before they land would see them as its own.
//
// Before that, from the commit that makes the instruction unknown and
// records the turn's launch to the engine's Start, the delivery is in
// flight too: a launch record of the instruction's session that a life
// still up made, live, with no start of that launch yet.
func (h *harness) deliveryInFlight(ws baton.WorkspaceID) string {
	var (
		got  []store.Instruction
		live []store.Launch
	)
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) {
		if got, err = tx.OpenInstructions(ws); err != nil {
			return err
		}
		live, err = tx.LiveLaunches(ws)
		return err
	}); err != nil {
		return err.Error()
	}
	ls := h.eng.Launches()
	started := map[baton.LaunchID]bool{}
	for _, l := range ls {
		started[l.Req.LaunchID] = true
	}
	for _, in := range got {
		if in.State != store.InstructionUnknown {
			continue
		}
		for _, l := range live {
			if l.Session != in.Session || started[l.ID] {
				continue
			}
			h.mu.Lock()
			li, ok := h.recorded[l.ID]
			up := ok && h.nodes[li.node].life == li.life && h.nodes[li.node].gate.get() == nodeUp
			h.mu.Unlock()
			if up {
				return fmt.Sprintf("instruction queue: %s's instruction %s: launch %s recorded, not started yet", ws, in.ID, l.ID)
			}
		}
		for i := len(ls) - 1; i >= 0; i-- {
			l := ls[i]
			if l.Failed || l.Req.Turn != transcript.Normal || l.Req.Session != in.Session || l.Req.Prompt != in.Text {
				continue
			}
			if n := h.launchedBy(l.N); n != nil && n.gate.get() == nodeUp && readySucceeded(l.Proc) {
				return fmt.Sprintf("instruction queue: %s's instruction %s delivered by launch %d, not settled yet", ws, in.ID, l.N)
			}
			break
		}
	}
	return ""
}

// readySucceeded reports whether p's readiness has resolved, successfully.
func readySucceeded(p *enginetest.Process) bool {
	if !p.ReadyResolved() {
		return false
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // resolved: Ready answers at once
	_, err := p.Ready(ctx)
	return err == nil
}

// queueAtRest says how ws's stored queue differs from the model's, ""
// when it does not; for an uncertain queue it checks no instruction went
// back and adopts the rest (see the model above).
func (h *harness) queueAtRest(ws baton.WorkspaceID) string {
	var got []store.Instruction
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { got, err = tx.ListInstructions(ws); return err }); err != nil {
		return err.Error()
	}
	byID := map[baton.InstructionID]store.Instruction{}
	for _, g := range got {
		byID[g.ID] = g
	}
	var mine []*instr
	for _, i := range h.instrs {
		if i.ws == ws {
			mine = append(mine, i)
		}
	}
	if len(got) != len(mine) {
		h.fatalf("instruction queue: %s holds %d instructions, the harness sent %d:\n%s", ws, len(got), len(mine), instrTable(got))
	}
	if !h.instrUncertain[ws] {
		for _, i := range mine {
			if g := byID[i.id]; g.State != i.state {
				return fmt.Sprintf("instruction queue: %s's instruction %s is %s, model %s:\n%s", ws, i.id, g.State, i.state, instrTable(got))
			}
		}
		return ""
	}
	open, pending := false, false
	for _, i := range mine {
		g, ok := byID[i.id]
		switch {
		case !ok:
			h.fatalf("instruction queue: %s's instruction %s vanished", ws, i.id)
		case (i.state == store.InstructionCancelled || i.state == store.InstructionDelivered) && g.State != i.state:
			h.fatalf("instruction queue: %s's instruction %s went from %s to %s on its own", ws, i.id, i.state, g.State)
		}
		i.state = g.State
		open = open || g.State.Open()
		pending = pending || g.State == store.InstructionPending
	}
	if !open {
		h.instrUncertain[ws] = false
		h.log.add(fmt.Sprintf("   model: %s's instruction queue certain again", ws))
		return ""
	}
	// A turn that ended unseen may have left a delivery on its way, or
	// left the queue waiting for a host's DeliverPending: the queue is at
	// rest only once nothing could be delivered without a step. So the
	// harness does what a host does after a turn it did not start
	// through Message ends, and waits for where that leads.
	if pending && !h.reservation(ws).Held && !h.archived[ws] && h.nothingRuns(ws) && h.dueIn(ws) == nil {
		if n := h.nodeUp(); n != nil {
			ctx, cancel := h.bounded()
			_, _, err := n.co.Sessions().DeliverPending(ctx, ws)
			cancel()
			if err != nil {
				return fmt.Sprintf("instruction queue: DeliverPending in %s on %s: %v", ws, n.id, err)
			}
			return fmt.Sprintf("instruction queue: %s's pending instructions delivered by the harness", ws)
		}
	}
	return ""
}

// nodeUp returns the first node that is up, nil when none is.
func (h *harness) nodeUp() *node {
	for _, n := range h.nodes {
		if n.gate.get() == nodeUp {
			return n
		}
	}
	return nil
}

func instrTable(ins []store.Instruction) string {
	var b strings.Builder
	for _, i := range ins {
		fmt.Fprintf(&b, "  %s %s session %q %q\n", i.ID, i.State, i.Session, i.Text)
	}
	return b.String()
}

// actTurnEnds ends an ordinary turn on its own (the agent finished), in a
// workspace no transfer holds, on a node that is up: the oldest pending
// instruction is delivered.
func (h *harness) actTurnEnds(t *rapid.T) {
	ws := h.drawWS(t)
	if h.pendingIn(ws) != nil {
		t.Skip("a transfer holds the workspace")
	}
	procs := h.endableTurns(ws)
	if len(procs) == 0 {
		t.Skip("no turn of a node that is up runs there alone")
	}
	h.turnEnds(ws, procs[rapid.IntRange(0, len(procs)-1).Draw(t, "turn")])
}

// endableTurns returns the ordinary turns running in ws when every process
// there is one, launched by a node that is up (the model knows where its
// end leads).
func (h *harness) endableTurns(ws baton.WorkspaceID) []*enginetest.Process {
	var procs []*enginetest.Process
	for _, p := range h.runningProcs(ws) {
		if n := h.launchedBy(p.N()); n != nil && n.gate.get() == nodeUp && p.Request().Turn == transcript.Normal {
			procs = append(procs, p)
		}
	}
	if len(procs) != len(h.runningProcs(ws)) {
		return nil
	}
	return procs
}

// turnEnds ends turn p of ws on its own and predicts the delivery, or
// the context-pressure transfer its settle fires (invariant 11).
// Sometimes the node that records the settle crashes right after its
// commit, before it creates the transfer: a restart, or another node's
// Reconcile, must create it; with two nodes, another node's Reconcile
// sometimes races the creation.
func (h *harness) turnEnds(ws baton.WorkspaceID, p *enginetest.Process) {
	n := h.launchedBy(p.N())
	s := h.settleOf(ws, p)
	crash := false
	if s != nil {
		h.settled(h.t, s)
		if crash = rapid.IntRange(0, 3).Draw(h.t, "crashAfterSettle") == 0; crash {
			h.mu.Lock()
			h.crashOnDue[n.idx] = true
			h.mu.Unlock()
		}
	}
	p.Finish(0, nil)
	h.movedOn[ws] = true
	switch {
	case s == nil:
		if !h.instrUncertain[ws] {
			h.deliverOldest(ws)
		}
	case crash:
		h.crashedAfterSettle(s, n)
		return
	default:
		if b := h.otherReconciler(n); b != nil && rapid.IntRange(0, 2).Draw(h.t, "raceReconcile") == 0 {
			h.reconcileOn(b) // it creates the transfer, or finds it created
			return
		}
		h.awaitCreated(s, "the settle's own node")
	}
	h.await()
}

// actDeliverPending asks a node to deliver ws's queue (a host's call after
// a turn it did not start through Message).
func (h *harness) actDeliverPending(t *rapid.T) {
	ws := h.drawWS(t)
	n := h.queueNode(t, ws)
	if h.instrUncertain[ws] {
		t.Skip("the model does not know where the queue stands")
	}
	want := h.oldestPending(ws)
	if want == nil || !h.nothingRuns(ws) || h.pendingIn(ws) != nil || h.archived[ws] {
		h.unchanged("DeliverPending with nothing to deliver now", func() {
			if got, ok, err := n.co.Sessions().DeliverPending(h.ctx, ws); err != nil || ok {
				h.fatalf("instruction queue: DeliverPending in %s (reserved %v, archived %v, nothing runs %v) delivered %s (%v), %v",
					ws, h.pendingIn(ws) != nil, h.archived[ws], h.nothingRuns(ws), got.ID, ok, err)
			}
		})
		return
	}
	ctx, cancel := h.bounded()
	defer cancel()
	got, ok, err := n.co.Sessions().DeliverPending(ctx, ws)
	if err != nil || !ok || got.ID != want.id || got.State != store.InstructionDelivered {
		h.fatalf("instruction queue: DeliverPending in %s = %s %s (%v), %v; want %s delivered, the oldest pending", ws, got.ID, got.State, ok, err, want.id)
	}
	h.deliverOldest(ws)
	h.await()
}

// actQueueBurst queues messages behind a running turn, cancels one and
// tries to resend it, then lets the turn end: the oldest pending message
// is delivered, the cancelled one never. (As single steps, two queued
// messages, a cancel and a turn's own end line up too rarely.)
func (h *harness) actQueueBurst(t *rapid.T) {
	ws := h.drawWS(t)
	if h.pendingIn(ws) != nil || h.archived[ws] || h.instrUncertain[ws] || h.orphaned(ws) || h.staleRow(ws) {
		t.Skip("the workspace is reserved, archived, or its queue or processes unknown to the model")
	}
	n := h.queueNode(t, ws)
	if h.nothingRuns(ws) {
		h.startTurn(ws, n, "busy") // a turn to queue behind
	}
	procs := h.endableTurns(ws)
	if len(procs) == 0 {
		t.Skip("no turn of a node that is up runs there alone")
	}
	for range rapid.IntRange(1, 3).Draw(t, "queued") {
		h.message(ws, n)
	}
	open := h.openInstrs(ws)
	if len(open) > 0 && rapid.Bool().Draw(t, "cancelOne") {
		i := open[rapid.IntRange(0, len(open)-1).Draw(t, "cancelled")]
		h.cancelInstr(i, n)
		if rapid.Bool().Draw(t, "resendCancelled") {
			h.resendInstr(i, n, true)
		}
	}
	h.turnEnds(ws, procs[0])
}

// startTurn starts an ordinary turn in ws on node n, which must succeed,
// and waits for rest.
func (h *harness) startTurn(ws baton.WorkspaceID, n *node, prompt string) {
	ctx, cancel := h.bounded()
	_, err := n.co.Sessions().Start(ctx, session.TurnRequest{Workspace: ws, Prompt: prompt + " " + itoa(h.nextSeq())})
	cancel()
	if err != nil {
		h.fatalf("ordinary start in %s on %s: %v", ws, n.id, err)
	}
	h.movedOn[ws] = true
	h.await()
}

// actQueueAcrossTransfer queues messages behind a running turn, requests a
// transfer there (its stop of the source delivers nothing), and while the
// transfer holds the workspace asks for the queue's delivery: a transfer
// keeps the queue as it is, so nothing is delivered and nothing changes
// (invariant 10). (As single steps, an instruction pending while a
// transfer holds its workspace and a delivery asked for then line up too
// rarely.)
func (h *harness) actQueueAcrossTransfer(t *rapid.T) {
	ws := h.drawWS(t)
	if h.pendingIn(ws) != nil || h.archived[ws] || h.instrUncertain[ws] || h.orphaned(ws) || h.staleRow(ws) {
		t.Skip("the workspace is reserved, archived, or its queue or processes unknown to the model")
	}
	n := h.queueNode(t, ws)
	if len(h.endableTurns(ws)) == 0 || h.nothingRuns(ws) {
		t.Skip("no turn of a node that is up runs there alone")
	}
	h.message(ws, n)
	// The transfer may complete and its target's first turn end on its
	// own, delivering the queue: as for any Create, the model cannot
	// place that against the release.
	h.queueUncertain(ws)
	h.createIn(t, ws)
	if h.pendingIn(ws) == nil || len(h.openInstrs(ws)) == 0 {
		return
	}
	// Whatever the model knows of the queue, a delivery while the
	// transfer holds the workspace must launch nothing and change nothing.
	d := h.drawUp(t)
	launches := len(h.eng.Launches())
	h.unchanged("DeliverPending while a transfer holds the workspace", func() {
		if got, ok, err := d.co.Sessions().DeliverPending(h.ctx, ws); err != nil || ok {
			h.fatalf("instruction queue: DeliverPending in %s on %s while a transfer holds it delivered %s (%v), %v", ws, d.id, got.ID, ok, err)
		}
	})
	for _, l := range h.eng.Launches()[launches:] {
		if l.Req.Workspace == ws && l.Req.Attempt == 0 {
			h.fatalf("instruction queue: DeliverPending in %s on %s while a transfer holds it launched %s", ws, d.id, h.describe(l))
		}
	}
}
