package handofftest

import (
	"errors"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// legacyRows gives ws zero to two session rows written before activation
// orders existed (order 0), with drawn times and native ids, as a store
// upgraded from an older release holds them.
func (h *harness) legacyRows(t *rapid.T, ws baton.WorkspaceID) {
	k := rapid.IntRange(0, 2).Draw(t, "legacyRows")
	err := h.raw.Update(h.ctx, func(tx store.Tx) error {
		for i := range k {
			s := store.Session{
				ID: baton.SessionID("ses_legacy_" + itoa(i)), Workspace: ws, Status: store.SessionEnded,
				Config:    rapid.SampledFrom([]baton.EngineConfig{engineA, engineC}).Draw(t, "legacyConfig"),
				StartedAt: start.Add(-time.Duration(rapid.IntRange(1, 48).Draw(t, "legacyStartedHoursAgo")) * time.Hour),
				CreatedAt: start.Add(-72 * time.Hour),
			}
			if rapid.Bool().Draw(t, "legacyEnded") {
				s.EndedAt = s.StartedAt.Add(time.Duration(rapid.IntRange(1, 48).Draw(t, "legacyRanHours")) * time.Hour)
			}
			if rapid.Bool().Draw(t, "legacyNative") {
				s.NativeID = "native-legacy-" + itoa(i)
			}
			if _, err := tx.InsertSession(s); err != nil {
				return err
			}
		}
		return session.Refresh(tx, ws, h.clk.Now())
	})
	if err != nil {
		t.Fatalf("legacy rows: %v", err)
	}
}

func (h *harness) actWakeup(t *rapid.T) {
	ws := h.drawWS(t)
	n := h.drawUp(t)
	sessions, err := n.co.Sessions().Sessions(h.ctx, ws)
	if err != nil {
		h.fatalf("sessions: %v", err)
	}
	pin := baton.SessionID("")
	switch rapid.IntRange(0, 2).Draw(t, "pin") {
	case 0:
		pin = h.current(ws)
	case 1:
		if len(sessions) > 0 {
			pin = rapid.SampledFrom(sessions).Draw(t, "pinned").ID
		}
	}
	at := h.clk.Now().Add(rapid.SampledFrom([]time.Duration{leaseTTL / 3, 24 * time.Hour}).Draw(t, "wakeupIn"))
	w, err := n.co.Sessions().ScheduleWakeup(h.ctx, store.Wakeup{Workspace: ws, Session: pin, Prompt: "wake " + itoa(h.nextSeq()), At: at})
	if err != nil {
		h.fatalf("schedule wakeup: %v", err)
	}
	h.wakeups[w.ID] = w
}

// actFireDue delivers the wakeups that are due, from a node that runs every
// workspace concerned: a wakeup in a reserved workspace must be deferred,
// neither fired nor dropped.
func (h *harness) actFireDue(t *rapid.T) {
	n := h.drawUp(t)
	now := h.clk.Now()
	due := map[baton.WakeupID]bool{}
	for id, w := range h.wakeups {
		if w.Status == store.WakeupPending && !w.At.After(now) {
			due[id] = true
			if h.runsOn(w.Workspace) != n && len(h.runningProcs(w.Workspace)) > 0 {
				t.Skip("another node runs a workspace with a due wakeup")
			}
		}
	}
	if len(due) == 0 {
		t.Skip("nothing due")
	}
	ctx, cancel := h.bounded()
	defer cancel()
	res, err := n.co.Sessions().FireDue(ctx, 0)
	if err != nil {
		h.fatalf("fire due on %s: %v", n.id, err)
	}
	deferred := map[baton.WakeupID]bool{}
	for _, id := range res.Deferred {
		deferred[id] = true
	}
	stored := map[baton.WakeupID]store.Wakeup{}
	_ = h.raw.View(h.ctx, func(tx store.Tx) error {
		for id := range due {
			if w, err := tx.GetWakeup(id); err == nil {
				stored[id] = w
			}
		}
		return nil
	})
	for id := range due {
		w := h.wakeups[id]
		got := stored[id]
		if h.pendingIn(w.Workspace) != nil && (!deferred[id] || got.Status != store.WakeupPending) {
			h.fatalf("wakeup %s came due while %s was reserved: status %s, deferred %v", id, w.Workspace, got.Status, deferred[id])
		}
		if got.Status == store.WakeupFired {
			h.movedOn[w.Workspace] = true
		}
		w.Status = got.Status
		h.wakeups[id] = w
	}
	h.await()
}

// actOrdinary sends an ordinary turn (implicit, fresh, or an explicit
// resume that re-activates even a rolled-back session) to the node that
// runs the workspace.
func (h *harness) actOrdinary(t *rapid.T) {
	ws := h.drawWS(t)
	n := h.runsOn(ws)
	if n.gate.get() != nodeUp {
		t.Skip("the node running the workspace is not up")
	}
	req := session.TurnRequest{Workspace: ws, Prompt: "ordinary " + itoa(h.nextSeq())}
	switch rapid.IntRange(0, 2).Draw(t, "startKind") {
	case 1:
		req.Fresh = true
	case 2:
		sessions, err := n.co.Sessions().Sessions(h.ctx, ws)
		if err != nil {
			h.fatalf("sessions: %v", err)
		}
		if len(sessions) > 0 {
			req.Session = rapid.SampledFrom(sessions).Draw(t, "explicit").ID
		}
	}
	ctx, cancel := h.bounded()
	defer cancel()
	_, err := n.co.Sessions().Start(ctx, req)
	_, running := n.co.Sessions().Running(ws)
	switch {
	case h.pendingIn(ws) != nil:
		expectErr(h, "ordinary start while reserved", err, session.ErrWorkspaceBusy)
	case (running || h.liveLaunchIn(ws)) && errors.Is(err, session.ErrSessionRunning):
		// A process runs there, on this node or (by its launch record)
		// on another or a gone one.
	case h.archived[ws]:
		expectErr(h, "ordinary start in an archived workspace", err, session.ErrArchived)
	case err != nil:
		h.fatalf("ordinary start %+v on %s: %v", req, n.id, err)
	default:
		h.movedOn[ws] = true
	}
	h.await()
}

// actArchive archives the spare workspace: refused while a transfer holds
// it or a process runs there; afterwards it takes no new work.
func (h *harness) actArchive(t *rapid.T) {
	const ws = baton.WorkspaceID("ws-2")
	n := h.runsOn(ws)
	if n.gate.get() != nodeUp {
		t.Skip("the node running the workspace is not up")
	}
	_, running := n.co.Sessions().Running(ws)
	err := n.co.Sessions().ArchiveWorkspace(h.ctx, ws)
	switch {
	case running:
		expectErr(h, "archive while running", err, session.ErrSessionRunning)
	case h.pendingIn(ws) != nil:
		expectErr(h, "archive while reserved", err, session.ErrWorkspaceBusy)
	case err != nil:
		h.fatalf("archive: %v", err)
	default:
		h.archived[ws] = true
	}
	h.await()
}

// liveLaunchIn reports whether ws has a launch record still live.
func (h *harness) liveLaunchIn(ws baton.WorkspaceID) bool {
	var live []store.Launch
	_ = h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err })
	return len(live) > 0
}
