package handofftest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// reapScript is how the scripted engine's reaper answers while a step
// arms it: an outcome that does not confirm (engine.Timeout or
// engine.Failed), with or without an error, and the process left as it
// was. The zero value passes reaps through to the scripted engine, which
// confirms every one.
type reapScript struct {
	out engine.StopOutcome
	err error
}

// errReapScripted is the error a scripted reap answers with.
var errReapScripted = errors.New("handofftest: scripted reap not confirmed")

// scriptedReap returns the reap answer armed for this step, if any.
func (h *harness) scriptedReap() (reapScript, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reapAnswer, h.reapAnswer.out != ""
}

// actReap asks a node's session service to reap the launches other
// processes left live (the session supervisor's Reap, of one workspace or of all),
// with no reservation taken, while the engine's reaper cannot confirm any
// of them gone. The model: nothing may change (no launch record closed, no
// session row ended, no reservation released, nothing launched), nothing
// is reported gone or ended, and every live launch another node (or an
// earlier life of this one) made is reported unconfirmed: its workspace
// stays held (the checks after the step find its row still running while
// the record stays live, and ordinary starts there refused).
func (h *harness) actReap(t *rapid.T) {
	n := h.drawUp(t)
	var scope baton.WorkspaceID
	if rapid.Bool().Draw(t, "reapOneWorkspace") {
		scope = h.drawWS(t)
	}
	rs := drawReapScript(t)
	var live []store.Launch
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(scope); return err }); err != nil {
		h.fatalf("launches: %v", err)
	}
	h.mu.Lock()
	made := map[baton.LaunchID]launchInfo{}
	for id, li := range h.launchID {
		made[id] = li
	}
	h.mu.Unlock()
	disarm := h.armReap(rs)
	defer disarm()
	running := map[baton.LaunchID]bool{}
	for _, l := range h.eng.Launches() {
		if l.Proc != nil && l.Proc.Running() && l.Req.LaunchID != "" {
			running[l.Req.LaunchID] = true
		}
	}
	what := fmt.Sprintf("a reap on %s of %q answered %s (error %v)", n.id, scope, rs.out, rs.err)
	h.unchanged(what, func() {
		ctx, cancel := h.bounded()
		defer cancel()
		res, err := supervisorOf(n.co).Reap(ctx, scope, nil)
		if err != nil {
			h.fatalf("%s: %v", what, err)
		}
		if len(res.Gone) > 0 || len(res.Ended) > 0 {
			h.fatalf("invariant 2 (unconfirmed reap): %s reported launches %v gone and sessions %v ended, but no reap confirmed anything; live launches:\n%s",
				what, res.Gone, res.Ended, launchTable(live))
		}
		var unconfirmed []baton.LaunchID
		for _, l := range res.Unconfirmed {
			unconfirmed = append(unconfirmed, l.ID)
		}
		held := map[baton.WorkspaceID]baton.LaunchID{}
		for _, l := range live {
			li, known := made[l.ID]
			mine := known && li.node == n.idx && li.life == n.life
			switch in := slices.Contains(unconfirmed, l.ID); {
			case mine && running[l.ID] && in:
				h.fatalf("invariant 2 (unconfirmed reap): %s reaped launch %s, which this node runs; unconfirmed %v, live launches:\n%s", what, l.ID, unconfirmed, launchTable(live))
			case known && !mine && !in:
				h.fatalf("invariant 2 (unconfirmed reap): %s did not report launch %s (node %s, life %d) unconfirmed; unconfirmed %v, live launches:\n%s",
					what, l.ID, h.nodes[li.node].id, li.life, unconfirmed, launchTable(live))
			case known && !mine:
				held[l.Workspace] = l.ID
			}
		}
		// What is not confirmed gone keeps its workspace held: an
		// ordinary start there is refused (ErrSessionRunning), even
		// where nothing runs on this node.
		for ws, id := range held {
			if h.pendingIn(ws) != nil || h.archived[ws] {
				continue
			}
			req := session.TurnRequest{Workspace: ws, Prompt: "beside an unconfirmed reap", Fresh: rapid.Bool().Draw(t, "freshBesideReap")}
			_, err := n.co.Sessions().Start(ctx, req)
			expectErr(h, fmt.Sprintf("invariant 2 (unconfirmed reap): ordinary start on %s beside launch %s, %s", n.id, id, what), err, session.ErrSessionRunning)
		}
	})
	disarm() // what comes to rest after the step reaps as scripted again
	h.await()
}

// launchTable prints launch records for a failure message.
func launchTable(ls []store.Launch) string {
	var b strings.Builder
	for _, l := range ls {
		fmt.Fprintf(&b, "  %s session %s workspace %s handoff %q holder %s gone %t\n", l.ID, l.Session, l.Workspace, l.Handoff, l.Holder, l.Gone)
	}
	return b.String()
}

// drawReapScript draws an answer of the engine's reaper that confirms
// nothing.
func drawReapScript(t *rapid.T) reapScript {
	rs := reapScript{out: rapid.SampledFrom([]engine.StopOutcome{engine.Timeout, engine.Failed}).Draw(t, "reapOutcome")}
	if rapid.Bool().Draw(t, "reapError") {
		rs.err = errReapScripted
	}
	return rs
}

// drawReap draws, one time in four (always while reapNext is set), a
// reap answer that confirms nothing, for a step whose own reaps it then
// governs; else the zero value (reaps pass through and confirm).
func (h *harness) drawReap(label string) reapScript {
	if !h.reapNext && rapid.IntRange(0, 3).Draw(h.t, label) != 0 {
		return reapScript{}
	}
	return drawReapScript(h.t)
}

// armReap makes the engine's reaper answer rs until the returned function
// is called (idempotent). The zero rs arms nothing.
func (h *harness) armReap(rs reapScript) func() {
	h.mu.Lock()
	h.reapAnswer = rs
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.reapAnswer = reapScript{}
		h.mu.Unlock()
	}
}

// othersLive returns the live launch records of ws but those of the
// processes node n's current life runs: a reap there
// (session.Service.Reap) reaps each of them.
func (h *harness) othersLive(ws baton.WorkspaceID, n *node) []baton.LaunchID {
	var live []store.Launch
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err }); err != nil {
		h.fatalf("launches: %v", err)
	}
	running := map[baton.LaunchID]bool{}
	for _, l := range h.eng.Launches() {
		if l.Proc != nil && l.Proc.Running() && l.Req.LaunchID != "" {
			running[l.Req.LaunchID] = true
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []baton.LaunchID
	for _, l := range live {
		if li, ok := h.launchID[l.ID]; ok && li.node == n.idx && li.life == n.life && running[l.ID] {
			continue // n runs it: not reaped
		}
		if li, ok := h.recorded[l.ID]; ok && li.node == n.idx && li.life == n.life {
			// n recorded it and is launching it (a queued instruction
			// delivered in the background): not another life's.
			continue
		}
		out = append(out, l.ID)
	}
	return out
}

// stillLive fails unless every launch record in held is still live: what
// a reap did not confirm gone keeps its record (invariant 2).
func (h *harness) stillLive(what string, held map[baton.WorkspaceID][]baton.LaunchID) {
	for ws, ids := range held {
		if len(ids) == 0 {
			continue
		}
		var live []store.Launch
		if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err }); err != nil {
			h.fatalf("launches: %v", err)
		}
		for _, id := range ids {
			if !slices.ContainsFunc(live, func(l store.Launch) bool { return l.ID == id }) {
				h.fatalf("invariant 2 (unconfirmed reap): %s closed launch %s in %s, which no reap confirmed gone; live now:\n%s", what, id, ws, launchTable(live))
			}
		}
	}
}

// anyRunning reports whether a process runs for one of the launches in
// held.
func (h *harness) anyRunning(held map[baton.WorkspaceID][]baton.LaunchID) bool {
	for _, l := range h.eng.Launches() {
		if l.Proc == nil || !l.Proc.Running() {
			continue
		}
		for _, ids := range held {
			if slices.Contains(ids, l.Req.LaunchID) {
				return true
			}
		}
	}
	return false
}

// supervisorOf is the part of a Coordinator's session service that only
// this module reaches (see workspace.Link): the harness reaps and records
// the end of a process that died with its node through it.
func supervisorOf(co *handoff.Coordinator) interface {
	Reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool) (workspace.ReapResult, error)
	RecordEnd(id baton.SessionID, launch baton.LaunchID, st engine.ExitStatus)
} {
	return workspace.Of(co.Sessions()).(interface {
		Reap(ctx context.Context, ws baton.WorkspaceID, keep func(holder string) bool) (workspace.ReapResult, error)
		RecordEnd(id baton.SessionID, launch baton.LaunchID, st engine.ExitStatus)
	})
}
