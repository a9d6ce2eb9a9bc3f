package handofftest

import (
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
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
			// Hours from a short range, so that the rule's tie-breaks
			// (the latest of start and end equal, then the start) come up
			// often.
			ago := rapid.IntRange(1, 4).Draw(t, "legacyStartedHoursAgo")
			s := store.Session{
				ID: baton.SessionID("ses_legacy_" + itoa(i)), Workspace: ws, Status: store.SessionEnded,
				Config:    rapid.SampledFrom([]baton.EngineConfig{engineA, engineC}).Draw(t, "legacyConfig"),
				StartedAt: start.Add(-time.Duration(ago) * time.Hour),
				CreatedAt: start.Add(-72 * time.Hour),
			}
			if rapid.Bool().Draw(t, "legacyEnded") {
				s.EndedAt = s.StartedAt.Add(time.Duration(rapid.IntRange(0, min(2, ago)).Draw(t, "legacyRanHours")) * time.Hour)
			}
			if rapid.Bool().Draw(t, "legacyNative") {
				s.NativeID = "native-legacy-" + itoa(i)
			}
			if err := tx.PutSession(s); err != nil {
				return err
			}
		}
		return workspace.Refresh(tx, ws, h.clk.Now())
	})
	if err != nil {
		t.Fatalf("legacy rows: %v", err)
	}
}

func (h *harness) actWakeup(t *rapid.T) {
	ws := h.drawWS(t)
	n := h.drawUp(t)
	sessions, err := session.List[store.Session](h.ctx, n.co.Sessions(), ws)
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
	for _, w := range res {
		deferred[w.ID] = w.Status == store.WakeupPending
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
		sessions, err := session.List[store.Session](h.ctx, n.co.Sessions(), ws)
		if err != nil {
			h.fatalf("sessions: %v", err)
		}
		if len(sessions) > 0 {
			req.Session = rapid.SampledFrom(sessions).Draw(t, "explicit").ID
		}
	}
	ctx, cancel := h.bounded()
	defer cancel()
	if h.pendingIn(ws) != nil {
		// Refused as busy, and a refused write changes nothing: no row
		// chosen, no launch recorded (invariant 8).
		h.unchanged("ordinary start while reserved", func() {
			_, err := n.co.Sessions().Start(ctx, req)
			expectErr(h, "ordinary start while reserved", err, session.ErrWorkspaceBusy)
		})
		return
	}
	implicit := !req.Fresh && req.Session == ""
	resumes := h.implicitResume(ws)
	stray := h.strayLaunch(ws, n)
	got, err := n.co.Sessions().Start(ctx, req)
	_, running := n.co.Sessions().Running(ws)
	if err == nil && implicit {
		h.checkImplicit(ws, "an ordinary start", resumes, got.ID)
	}
	switch {
	case !h.archived[ws] && stray != "":
		expectErr(h, "invariant 2 (unconfirmed reap): ordinary start on "+n.id+" beside "+stray, err, session.ErrSessionRunning)
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

// strayLaunch names a launch record of ws still live that another node,
// or an earlier life of n, made: its process is not confirmed gone, so an
// ordinary start on n must be refused (session.ErrSessionRunning) until a
// reap confirms it. "" when there is none.
func (h *harness) strayLaunch(ws baton.WorkspaceID, n *node) string {
	var live []store.Launch
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err }); err != nil {
		h.fatalf("launches: %v", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range live {
		if li, ok := h.launchID[l.ID]; ok && (li.node != n.idx || li.life != n.life) {
			return fmt.Sprintf("launch %s of session %s, made by %s in life %d", l.ID, l.Session, h.nodes[li.node].id, li.life)
		}
	}
	return ""
}

// liveLaunchIn reports whether ws has a launch record still live.
func (h *harness) liveLaunchIn(ws baton.WorkspaceID) bool {
	var live []store.Launch
	_ = h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(ws); return err })
	return len(live) > 0
}

// implicitResume is the harness's own statement of the implicit-resume
// rule, over ws's rows as they are now: the current-session rule (see
// refCurrent, legacy rows at order 0 and their timestamp fallback
// included) restricted to sessions with a native id on the engine and
// account of the workspace's configuration; "" when none qualifies (a
// fresh session starts).
func (h *harness) implicitResume(ws baton.WorkspaceID) baton.SessionID {
	var (
		w    store.Workspace
		rows []store.Session
	)
	err := h.raw.View(h.ctx, func(tx store.Tx) (err error) {
		if w, err = tx.GetWorkspace(ws); err != nil {
			return err
		}
		rows, err = tx.ListSessions(ws)
		return err
	})
	if err != nil {
		h.fatalf("reading %s: %v", ws, err)
	}
	cfg := w.Config.Normalize()
	var keep []store.Session
	for _, s := range rows {
		if c := s.Config.Normalize(); s.NativeID != "" && c.Engine == cfg.Engine && c.Account == cfg.Account {
			keep = append(keep, s)
		}
	}
	return refCurrent(keep)
}

// checkImplicit fails unless a turn that named no session ran want (the
// implicit-resume rule's choice before it), or a fresh session when the
// rule chose none.
func (h *harness) checkImplicit(ws baton.WorkspaceID, what string, want, got baton.SessionID) {
	h.t.Helper()
	if want != "" && got != want {
		h.fatalf("invariant 9: %s in %s ran session %s, but the implicit-resume rule selects %s; sessions:\n%s", what, ws, got, want, sessionTable(h.read().sessions[ws]))
	}
	if want == "" {
		for _, l := range h.eng.Launches() {
			if l.Req.Session == got && l.Req.Mode != "fresh" {
				h.fatalf("invariant 9: %s in %s resumed %s, but the implicit-resume rule selects no session", what, ws, got)
			}
		}
	}
}
