package handofftest

import (
	"errors"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// check verifies the nine invariants of the package doc against the store, the
// engine and the model.
func (h *harness) check() {
	h.t.Helper()
	var (
		pend     []store.Handoff
		all      = map[baton.HandoffID]store.Handoff{}
		wss      = map[baton.WorkspaceID]store.Workspace{}
		sessions = map[baton.WorkspaceID][]store.Session{}
		reserved = map[baton.WorkspaceID]bool{}
		wakeups  = map[baton.WakeupID]store.Wakeup{}
	)
	err := h.st.View(h.ctx, func(tx store.Tx) error {
		var err error
		if pend, err = tx.ListPendingHandoffs(); err != nil {
			return err
		}
		for _, ws := range h.wss {
			w, err := tx.GetWorkspace(ws)
			if err != nil {
				return err
			}
			wss[ws] = w
			if sessions[ws], err = tx.ListSessions(ws); err != nil {
				return err
			}
			hs, err := tx.ListHandoffs(ws)
			if err != nil {
				return err
			}
			for _, x := range hs {
				all[x.ID] = x
			}
			r, err := tx.GetReservation(ws)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			reserved[ws] = err == nil && r.Held
			ws, err := tx.ListWakeups(ws)
			if err != nil {
				return err
			}
			for _, w := range ws {
				wakeups[w.ID] = w
			}
		}
		return nil
	})
	if err != nil {
		h.fatalf("reading the store: %v", err)
	}

	// 1. At most one pending handoff per workspace; terminal rows frozen.
	perWS := map[baton.WorkspaceID]int{}
	for _, p := range pend {
		perWS[p.Workspace]++
		if perWS[p.Workspace] > 1 {
			h.fatalf("invariant 1: %d pending handoffs in %s", perWS[p.Workspace], p.Workspace)
		}
	}
	for _, id := range h.order {
		m := h.hs[id]
		got, ok := all[id]
		if !ok {
			h.fatalf("invariant 1: handoff %s vanished", id)
		}
		if got.State != m.state {
			h.fatalf("model: handoff %s is %s, model says %s (error %q)", id, got.State, m.state, got.Error)
		}
		if m.frozen != nil {
			now, err := h.co.Get(h.ctx, m.ws, id)
			if err != nil {
				h.fatalf("get %s: %v", id, err)
			}
			if d := cmp.Diff(*m.frozen, now); d != "" {
				h.fatalf("invariant 1: terminal handoff %s changed (-then +now):\n%s", id, d)
			}
		}
		// 7. A report only from the current attempt's token in generating:
		// the model stores exactly what such submissions sent.
		if got.Report != m.report {
			h.fatalf("invariant 7: handoff %s stores report %q, model %q", id, got.Report, m.report)
		}
		if got.StopUnconfirmed != m.stopUnconfirmed {
			h.fatalf("model: handoff %s StopUnconfirmed=%v, model %v", id, got.StopUnconfirmed, m.stopUnconfirmed)
		}
	}

	// 2. At most one engine process per workspace, ever.
	for _, ws := range h.wss {
		if n := h.eng.MaxRunning(ws); n > 1 {
			h.fatalf("invariant 2: %d processes ran at once in %s", n, ws)
		}
	}

	// 3. A target at most once per attempt; a report-only turn at most once
	// per attempt; nothing for a cancelled handoff after it ended.
	type key struct {
		id      string
		attempt int
		report  bool
	}
	seen := map[key]int{}
	for _, l := range h.eng.Launches() {
		switch {
		case l.Req.Report != nil:
			seen[key{string(l.Req.Report.Handoff), l.Req.Attempt, true}]++
		case l.Req.Attempt > 0 && l.Req.Turn == engine.Normal:
			seen[key{string(l.Req.Session), l.Req.Attempt, false}]++
		}
	}
	for k, n := range seen {
		if n > 1 {
			h.fatalf("invariant 3: %d launches for %+v", n, k)
		}
	}
	for _, id := range h.order {
		if m := h.hs[id]; m.state == store.StateCancelled && m.frozen != nil {
			if n := h.launchesOf(m); n != m.launchesAtEnd {
				h.fatalf("invariant 3: %d launches for handoff %s after it was cancelled", n-m.launchesAtEnd, id)
			}
		}
	}

	for _, ws := range h.wss {
		w := wss[ws]
		latest := h.latest(ws)
		if h.movedOn[ws] {
			latest = nil
		}
		// 4. completed: the target is current (while nothing newer happened).
		if latest != nil && latest.state == store.StateCompleted {
			got := all[latest.id]
			if w.CurrentSession != got.TargetSession {
				h.fatalf("invariant 4: %s completed but current is %q, not the target %q", latest.id, w.CurrentSession, got.TargetSession)
			}
		}
		// 5. failed, interrupted, cancelled: the source is current with its
		// configuration; the target is rolled back.
		if latest != nil && (latest.state == store.StateFailed || latest.state == store.StateInterrupted || latest.state == store.StateCancelled) {
			got := all[latest.id]
			if w.CurrentSession != latest.source {
				h.fatalf("invariant 5: %s is %s but current is %q, not the source %q", latest.id, latest.state, w.CurrentSession, latest.source)
			}
			if w.Config != latest.sourceConfig {
				h.fatalf("invariant 5: %s is %s but the workspace runs %+v, not the source's %+v", latest.id, latest.state, w.Config, latest.sourceConfig)
			}
			for _, s := range sessions[ws] {
				if s.ID == got.TargetSession && s.ActivationOrder != session.RolledBack {
					h.fatalf("invariant 5: target %s of %s has order %d, want rolled back", s.ID, latest.id, s.ActivationOrder)
				}
			}
		}
		if cur, ok := session.SelectCurrent(sessions[ws]); ok != (w.CurrentSession != "") || (ok && cur.ID != w.CurrentSession) {
			h.fatalf("invariant 5/9: cached current %q, the rule selects %q", w.CurrentSession, cur.ID)
		}
		if imp, ok := session.SelectImplicitResume(sessions[ws], w.Config); ok && imp.ActivationOrder < 0 {
			h.fatalf("invariant 5: rolled-back session %s is the implicit-resume choice", imp.ID)
		}

		// 8. Reservation held exactly while pending; a launch without the
		// owner token is refused while it is held.
		pending := h.pendingIn(ws) != nil
		if reserved[ws] != pending {
			h.fatalf("invariant 8: %s reserved=%v, pending=%v", ws, reserved[ws], pending)
		}
		err := h.co.AssertWritable(h.ctx, ws, session.Owner{})
		if pending != errors.Is(err, session.ErrWorkspaceBusy) || (!pending && err != nil) {
			h.fatalf("invariant 8: %s pending=%v but AssertWritable without owner = %v", ws, pending, err)
		}

		// 9. Orders unique among > 0; the current session has the highest.
		orders := map[int64]baton.SessionID{}
		var max int64
		for _, s := range sessions[ws] {
			if s.ActivationOrder <= 0 {
				continue
			}
			if prev, dup := orders[s.ActivationOrder]; dup {
				h.fatalf("invariant 9: sessions %s and %s share order %d", prev, s.ID, s.ActivationOrder)
			}
			orders[s.ActivationOrder] = s.ID
			if s.ActivationOrder > max {
				max = s.ActivationOrder
			}
		}
		if w.CurrentSession != "" && max > 0 && orders[max] != w.CurrentSession {
			h.fatalf("invariant 9: current %s does not have the highest order %d (%s)", w.CurrentSession, max, orders[max])
		}
	}

	// 4 (wakeups). Wakeups pinned to a completed transfer's source moved to
	// its target with prompt and deadline unchanged; nothing else moved.
	for id, want := range h.wakeups {
		got, ok := wakeups[id]
		if !ok {
			h.fatalf("wakeup %s vanished", id)
		}
		if got.Session != want.Session || got.Prompt != want.Prompt || !got.At.Equal(want.At) {
			h.fatalf("invariant 4: wakeup %s is pinned to %q (%q at %v), want %q (%q at %v)", id, got.Session, got.Prompt, got.At, want.Session, want.Prompt, want.At)
		}
	}
}

// latest returns the newest modelled handoff of ws, if any.
func (h *harness) latest(ws baton.WorkspaceID) *model {
	for i := len(h.order) - 1; i >= 0; i-- {
		if m := h.hs[h.order[i]]; m.ws == ws {
			return m
		}
	}
	return nil
}
