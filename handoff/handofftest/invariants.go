package handofftest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// world is everything the invariants read, in one View of the store plus
// the engine's record.
type world struct {
	pend     []store.Handoff
	all      map[baton.HandoffID]store.Handoff
	wss      map[baton.WorkspaceID]store.Workspace
	sessions map[baton.WorkspaceID][]store.Session
	res      map[baton.WorkspaceID]store.Reservation
	wakeups  map[baton.WakeupID]store.Wakeup
}

func (h *harness) read() world {
	w := world{
		all: map[baton.HandoffID]store.Handoff{}, wss: map[baton.WorkspaceID]store.Workspace{},
		sessions: map[baton.WorkspaceID][]store.Session{}, res: map[baton.WorkspaceID]store.Reservation{},
		wakeups: map[baton.WakeupID]store.Wakeup{},
	}
	err := h.raw.View(h.ctx, func(tx store.Tx) error {
		var err error
		if w.pend, err = tx.PendingHandoffs(""); err != nil {
			return err
		}
		for _, ws := range h.wss {
			if w.wss[ws], err = tx.GetWorkspace(ws); err != nil {
				return err
			}
			if w.sessions[ws], err = tx.ListSessions(ws); err != nil {
				return err
			}
			hs, err := tx.ListHandoffs(ws)
			if err != nil {
				return err
			}
			for _, x := range hs {
				w.all[x.ID] = x
			}
			r, err := tx.GetReservation(ws)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			w.res[ws] = r
			wks, err := tx.ListWakeups(ws, "")
			if err != nil {
				return err
			}
			for _, x := range wks {
				w.wakeups[x.ID] = x
			}
		}
		return nil
	})
	if err != nil {
		h.fatalf("reading the store: %v", err)
	}
	return w
}

// check verifies the eleven invariants (see the package documentation)
// against the store, the engine's record of every process and the model.
// It calls nothing of the code under test but the store it reads and the
// AssertWritable calls invariant 8 is about (queueAtRest, polled before
// it, may make a host's DeliverPending: see invariant 10).
func (h *harness) check() {
	h.t.Helper()
	h.mu.Lock()
	deferred := h.deferred
	h.deferred = nil
	h.mu.Unlock()
	for _, fn := range deferred {
		fn()
	}
	h.mu.Lock()
	violations := h.violations
	h.violations = nil
	h.mu.Unlock()
	if len(violations) > 0 {
		h.fatalf("%s", strings.Join(violations, "\n"))
	}
	w := h.read()
	h.checkHandoffs(w)
	h.checkProcesses(w)
	h.checkLaunchCounts()
	h.checkLaunchRecords()
	for _, ws := range h.wss {
		h.checkWorkspace(w, ws)
	}
	h.checkPressure(w)
	// 4 (wakeups). Wakeups pinned to a completed transfer's source moved to
	// its target with prompt and deadline unchanged; nothing else moved.
	for id, want := range h.wakeups {
		got, ok := w.wakeups[id]
		if !ok {
			h.fatalf("wakeup %s vanished", id)
		}
		if got.Session != want.Session || got.Prompt != want.Prompt || !got.At.Equal(want.At) {
			h.fatalf("invariant 4: wakeup %s is pinned to %q (%q at %v), want %q (%q at %v)", id, got.Session, got.Prompt, got.At, want.Session, want.Prompt, want.At)
		}
		if h.pendingIn(want.Workspace) != nil && want.Status == store.WakeupPending && got.Status != store.WakeupPending {
			h.fatalf("wakeup %s is %s while %s is reserved", id, got.Status, want.Workspace)
		}
	}
}

// checkHandoffs: invariants 1 and 7, and the model's states.
func (h *harness) checkHandoffs(w world) {
	perWS := map[baton.WorkspaceID]int{}
	for _, p := range w.pend {
		perWS[p.Workspace]++
		if perWS[p.Workspace] > 1 {
			h.fatalf("invariant 1: %d pending handoffs in %s", perWS[p.Workspace], p.Workspace)
		}
	}
	for _, id := range h.order {
		m := h.hs[id]
		got, ok := w.all[id]
		if !ok {
			h.fatalf("invariant 1: handoff %s vanished", id)
		}
		if m.frozen != nil {
			if d := cmp.Diff(*m.frozen, viewOf(got)); d != "" {
				h.fatalf("invariant 1: terminal handoff %s changed (-then +now):\n%s", id, d)
			}
		}
		if m.uncertain {
			continue
		}
		if got.State != m.state {
			h.fatalf("model: handoff %s is %s, model says %s (error %q)", id, got.State, m.state, got.Error)
		}
		// 7. A report only from the current attempt's token in generating:
		// the model stores exactly what such submissions sent.
		if got.Report != m.report {
			h.fatalf("invariant 7: handoff %s stores report %q, model %q", id, got.Report, m.report)
		}
		if got.StopUnconfirmed != m.stopUnconfirmed {
			h.fatalf("model: handoff %s (%s) StopUnconfirmed=%v, model %v (error %q)", id, got.State, got.StopUnconfirmed, m.stopUnconfirmed, got.Error)
		}
		if got.Attempt != m.attempt {
			h.fatalf("model: handoff %s at attempt %d, model %d", id, got.Attempt, m.attempt)
		}
		h.checkAttempt(w, m, got)
	}
}

// checkAttempt compares the records of handoff m with the model at any
// moment of an attempt, not only once it settles: how each earlier attempt
// ended (the history), that their targets are rolled back and ended while
// the transfer is pending, that an attempt stopping or generating has no
// target yet, and that a starting attempt's target is a fresh row on the
// requested configuration that no current-session rule can select before
// its completion.
func (h *harness) checkAttempt(w world, m *model, got store.Handoff) {
	h.t.Helper()
	if d := cmp.Diff(m.history, outcomesOf(got.History), cmp.AllowUnexported(outcome{}), cmpopts.EquateEmpty()); d != "" {
		h.fatalf("invariant 1/5: handoff %s (%s, attempt %d): history (-model +stored):\n%s", m.id, got.State, got.Attempt, d)
	}
	rows := map[baton.SessionID]store.Session{}
	for _, s := range w.sessions[m.ws] {
		rows[s.ID] = s
	}
	if m.pending() {
		for _, a := range got.History {
			s, ok := rows[a.TargetSession]
			if a.TargetSession == "" {
				continue // the attempt ended before it had a target
			}
			if !ok || s.ActivationOrder != rolledBack || s.Status != store.SessionEnded {
				h.fatalf("invariant 5: %s is %s at attempt %d, but the target %s of its attempt %d (%s) is %s at order %d, want rolled back and ended",
					m.id, m.state, m.attempt, a.TargetSession, a.Attempt, a.Outcome, s.Status, s.ActivationOrder)
			}
		}
	}
	switch m.state {
	case store.StateStopping, store.StateGenerating:
		if got.TargetSession != "" {
			h.fatalf("invariant 3: %s is %s at attempt %d, but already names target %s", m.id, m.state, m.attempt, got.TargetSession)
		}
	case store.StateStarting:
		s, ok := rows[got.TargetSession]
		want := m.req.Target.Normalize()
		switch {
		case !ok:
			h.fatalf("invariant 3: %s is starting, but its target %q has no row in %s", m.id, got.TargetSession, m.ws)
		case s.Config != want:
			h.fatalf("invariant 3: %s's target %s runs %+v, want the requested %+v", m.id, s.ID, s.Config, want)
		case s.Status != store.SessionIdle || s.ActivationOrder != rolledBack || s.NativeID != "":
			h.fatalf("invariant 5: %s's target %s is %s at order %d (native %q) before readiness, want idle at order %d (never selectable) and fresh",
				m.id, s.ID, s.Status, s.ActivationOrder, s.NativeID, rolledBack)
		}
	case store.StateCompleted:
		if s, ok := rows[got.TargetSession]; !ok || s.Config != m.req.Target.Normalize() {
			h.fatalf("invariant 4: %s completed on target %q with %+v, want the requested %+v", m.id, got.TargetSession, s.Config, m.req.Target.Normalize())
		}
	}
}

// checkProcesses: invariant 2 from the engine's record of every process's
// lifetime across every node (never two at the same moment in a workspace,
// a report-only turn included), and, at rest, that what runs is what the
// records and the model allow.
func (h *harness) checkProcesses(w world) {
	if ov := h.eng.Overlaps(); len(ov) > 0 {
		ls := h.eng.Launches()
		o := ov[0]
		h.fatalf("invariant 2: two processes ran at once in %s: %s and %s (%d overlaps in all)",
			o.Workspace, h.describe(ls[o.First-1]), h.describe(ls[o.Second-1]), len(ov))
	}
	if why := h.rowsMatchProcesses(w); why != "" {
		h.fatalf("%s", why)
	}
}

// rowsMatchProcesses says how the session rows disagree with the processes
// that run, or "": a row says running exactly while its process runs
// (unless the node that ran it is gone or paused), and a process runs only
// for a row that says running (unless it is a target still starting, or a
// process whose stop its transfer knows is unconfirmed). A process's end
// reaches its row asynchronously: await polls this until it holds.
func (h *harness) rowsMatchProcesses(w world) string {
	live := map[baton.SessionID]baton.WorkspaceID{}
	launch := map[baton.SessionID]enginetest.Launch{}
	for _, l := range h.eng.Launches() {
		if l.Proc != nil && l.Proc.Running() && l.Req.Turn == transcript.Normal {
			live[l.Req.Session] = l.Req.Workspace
			launch[l.Req.Session] = l
		}
	}
	for _, ws := range h.wss {
		for _, s := range w.sessions[ws] {
			if _, runs := live[s.ID]; s.Status == store.SessionRunning && !runs && h.sessionNodeUp(s.ID) {
				return fmt.Sprintf("session %s in %s is recorded running, but no process of it runs (and the node that launched it still runs)", s.ID, ws)
			}
		}
	}
	for id, ws := range live {
		s, err := h.session(id)
		if err != nil {
			return fmt.Sprintf("a process runs for session %s the store does not hold: %v", id, err)
		}
		// A row may say ended while its process runs only when the
		// transfer that ended it knows its stop is unconfirmed, or the node
		// that ran it is gone.
		unconfirmed := false
		if m := h.pendingIn(ws); m != nil && (m.stopUnconfirmed || m.uncertain) {
			unconfirmed = true
		}
		if s.Status != store.SessionRunning && !h.startingTarget(id) && !unconfirmed && h.sessionNodeUp(id) {
			return fmt.Sprintf("a process of session %s runs, but its row says %s (%s): %s", id, s.Status, s.EndReason, h.describe(launch[id]))
		}
	}
	return ""
}

// sessionNodeUp reports whether the node that last launched session id
// still runs the life it launched it in (a crashed or shut-down node leaves
// rows behind for its restart to settle).
func (h *harness) sessionNodeUp(id baton.SessionID) bool {
	n := h.lastLauncher(id)
	return n != nil && n.gate.get() == nodeUp
}

// lastLauncher returns the node that made the latest normal launch of
// session id, nil when that launch was made in a life that is over.
func (h *harness) lastLauncher(id baton.SessionID) *node {
	ls := h.eng.Launches()
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].Req.Session != id || ls[i].Failed || ls[i].Req.Turn == transcript.ReportOnly {
			continue
		}
		return h.launchedBy(ls[i].N)
	}
	return nil
}

// startingTarget reports whether id is the target of an attempt still
// starting (its row stays idle until readiness).
func (h *harness) startingTarget(id baton.SessionID) bool {
	for _, hid := range h.order {
		if m := h.hs[hid]; m.pending() {
			if got, err := h.load(hid); err == nil && got.TargetSession == id && got.State == store.StateStarting {
				return true
			}
		}
	}
	return false
}

// checkLaunchCounts: invariant 3. A target at most once per attempt, a
// report-only turn at most once per attempt, nothing for a handoff after it
// became terminal.
func (h *harness) checkLaunchCounts() {
	type key struct {
		id      string
		attempt int
		report  bool
	}
	seen := map[key]int{}
	targets := map[baton.SessionID]int{} // a target session is a fresh session of one attempt
	for _, l := range h.eng.Launches() {
		switch {
		case l.Req.Report != nil:
			seen[key{string(l.Req.Report.Handoff), l.Req.Attempt, true}]++
		case l.Req.Attempt > 0 && l.Req.Turn == transcript.Normal:
			seen[key{string(l.Req.Session), l.Req.Attempt, false}]++
			if prev, ok := targets[l.Req.Session]; ok && prev != l.Req.Attempt {
				h.fatalf("invariant 3: session %s was the target of attempts %d and %d", l.Req.Session, prev, l.Req.Attempt)
			}
			targets[l.Req.Session] = l.Req.Attempt
		}
	}
	for k, n := range seen {
		if n > 1 {
			h.fatalf("invariant 3: %d launches for %+v", n, k)
		}
	}
	for _, id := range h.order {
		if m := h.hs[id]; m.frozen != nil {
			if n := h.launchesOf(m); n != m.launchesAtEnd {
				h.fatalf("invariant 3: %d launches for handoff %s after it became %s", n-m.launchesAtEnd, id, m.state)
			}
		}
	}
}

// checkWorkspace: invariants 4, 5, 8 and 9 of one workspace.
func (h *harness) checkWorkspace(w world, ws baton.WorkspaceID) {
	wsr := w.wss[ws]
	sessions := w.sessions[ws]
	latest := h.latest(ws)
	if h.movedOn[ws] || (latest != nil && latest.uncertain) {
		latest = nil
	}
	// The reference rule, computed here from the rows: the cached current
	// session must be the one it selects.
	if want := refCurrent(sessions); wsr.CurrentSession != want {
		h.fatalf("invariant 5/9: %s's current session is %q, the current-session rule selects %q", ws, wsr.CurrentSession, want)
	}
	if latest != nil {
		got := w.all[latest.id]
		switch latest.state {
		case store.StateStopping, store.StateGenerating, store.StateStarting:
			// 5. Until it completes, the transfer's source stays current:
			// the target is activated only by the completion.
			if wsr.CurrentSession != latest.source {
				h.fatalf("invariant 5: %s is %s but current is %q, not the source %q", latest.id, latest.state, wsr.CurrentSession, latest.source)
			}
		case store.StateCompleted:
			// 4. completed: the target is current.
			if wsr.CurrentSession != got.TargetSession {
				h.fatalf("invariant 4: %s completed but current is %q, not the target %q; sessions:\n%s", latest.id, wsr.CurrentSession, got.TargetSession, sessionTable(sessions))
			}
		case store.StateFailed, store.StateInterrupted, store.StateCancelled:
			// 5. The source is current with its configuration; every
			// target is rolled back.
			if wsr.CurrentSession != latest.source {
				h.fatalf("invariant 5: %s is %s but current is %q, not the source %q", latest.id, latest.state, wsr.CurrentSession, latest.source)
			}
			if wsr.Config != latest.sourceConfig {
				h.fatalf("invariant 5: %s is %s but the workspace runs %+v, not the source's %+v", latest.id, latest.state, wsr.Config, latest.sourceConfig)
			}
			targets := map[baton.SessionID]bool{got.TargetSession: true}
			for _, a := range got.History {
				targets[a.TargetSession] = true
			}
			for _, s := range sessions {
				if targets[s.ID] && (s.ActivationOrder != rolledBack || s.Status != store.SessionEnded) {
					h.fatalf("invariant 5: target %s of %s is %s at order %d, want rolled back and ended", s.ID, latest.id, s.Status, s.ActivationOrder)
				}
			}
		}
	}

	// 8. Reservation held exactly while pending, at the epoch the model
	// counted; a launch without the owner token is refused while it is held.
	pm := h.pendingIn(ws)
	res := w.res[ws]
	if res.Held != (pm != nil) {
		h.fatalf("invariant 8: %s reserved=%v, pending=%v", ws, res.Held, pm != nil)
	}
	if pm == nil || !pm.uncertain {
		if res.Epoch != h.epoch[ws] {
			h.fatalf("invariant 8: %s's reservation is at epoch %d after %d takes", ws, res.Epoch, h.epoch[ws])
		}
	}
	if co := h.coordinatorFor(-1); co != nil {
		h.checkOwners(co, ws, pm, res)
	}
	if res.Held {
		h.checkLease(ws, pm, res)
	}

	// 9. Orders unique among > 0; the current session has the highest.
	orders := map[int64]baton.SessionID{}
	var top int64
	for _, s := range sessions {
		if s.ActivationOrder <= 0 {
			continue
		}
		if prev, dup := orders[s.ActivationOrder]; dup {
			h.fatalf("invariant 9: sessions %s and %s of %s share order %d", prev, s.ID, ws, s.ActivationOrder)
		}
		orders[s.ActivationOrder] = s.ID
		top = max(top, s.ActivationOrder)
	}
	if top > wsr.ActivationCounter {
		h.fatalf("invariant 9: %s's activation counter %d is below order %d", ws, wsr.ActivationCounter, top)
	}
	if wsr.CurrentSession != "" && top > 0 && orders[top] != wsr.CurrentSession {
		h.fatalf("invariant 9: current %s does not have the highest order %d (%s)", wsr.CurrentSession, top, orders[top])
	}
}

// rolledBack is the activation order of a rolled-back session.
const rolledBack = -1

// refCurrent is the harness's own statement of the current-session rule:
// a running session first; else the highest activation order >= 0, rows
// at 0 ordered by their latest of start and end, then start, then creation;
// rolled-back rows never.
func refCurrent(sessions []store.Session) baton.SessionID {
	var best *store.Session
	better := func(a, b store.Session) bool { // a more current than b
		ar, br := a.Status == store.SessionRunning, b.Status == store.SessionRunning
		if ar != br {
			return ar
		}
		if a.ActivationOrder != b.ActivationOrder {
			return a.ActivationOrder > b.ActivationOrder
		}
		la, lb := a.StartedAt, b.StartedAt
		if a.EndedAt.After(la) {
			la = a.EndedAt
		}
		if b.EndedAt.After(lb) {
			lb = b.EndedAt
		}
		if !la.Equal(lb) {
			return la.After(lb)
		}
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.After(b.StartedAt)
		}
		return a.Seq > b.Seq
	}
	for i := range sessions {
		s := sessions[i]
		if s.ActivationOrder < 0 {
			continue
		}
		if best == nil || better(s, *best) {
			best = &sessions[i]
		}
	}
	if best == nil {
		return ""
	}
	return best.ID
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

// describe names a launch for a failure message.
func (h *harness) describe(l enginetest.Launch) string {
	li, ok := h.launchOf(l.N)
	who := "an unknown node"
	if ok {
		who = fmt.Sprintf("node %d (life %d)", li.node, li.life)
	}
	what := "an ordinary turn"
	switch {
	case l.Req.Report != nil:
		what = fmt.Sprintf("the report-only turn of %s attempt %d", l.Req.Report.Handoff, l.Req.Attempt)
	case l.Req.Attempt > 0:
		what = fmt.Sprintf("the target of attempt %d", l.Req.Attempt)
	}
	end := "still running"
	if l.Ended > 0 {
		end = fmt.Sprintf("ended at %d", l.Ended)
	}
	return fmt.Sprintf("launch %d (%s of session %s by %s, began at %d, %s)", l.N, what, l.Req.Session, who, l.Began, end)
}

func sessionTable(sessions []store.Session) string {
	var b strings.Builder
	for _, s := range sessions {
		fmt.Fprintf(&b, "  %s %s order %d native %q started %s ended %s (%s)\n", s.ID, s.Status, s.ActivationOrder, s.NativeID,
			s.StartedAt.Format("15:04:05"), s.EndedAt.Format("15:04:05"), s.EndReason)
	}
	return b.String()
}

// checkOwners is invariant 8's fencing: while ws is reserved (pm pending),
// a write without an owner, or with a wrong token at the current epoch, is
// refused as busy; the owner token of an earlier take, or the current
// token presented with another epoch, is refused as stale; the current
// owner (the token the launches of the current take carried) may write.
// Without a reservation every owner may. The credentials are the ones the
// launches carried; what must happen to each is the model's (its epoch
// count and its pending handoff).
func (h *harness) checkOwners(co *handoff.Coordinator, ws baton.WorkspaceID, pm *model, res store.Reservation) {
	h.mu.Lock()
	var (
		cur, old   baton.Token
		oldEpoch   int64
		haveCur    bool
		epoch      = h.epoch[ws]
		knownEpoch = res.Epoch == epoch
	)
	for e, tok := range h.owners[ws] {
		switch {
		case e == epoch:
			cur, haveCur = tok, true
		case e < epoch && e > oldEpoch:
			old, oldEpoch = tok, e
		}
	}
	h.mu.Unlock()
	assert := func(what string, o workspace.Owner, want error) {
		h.t.Helper()
		// A host's own write (the zero owner) is checked through the
		// public AssertWritable, an owner's by the rule its launches meet.
		err := co.Sessions().AssertWritable(h.ctx, ws)
		if o != (workspace.Owner{}) {
			err = h.raw.View(h.ctx, func(tx store.Tx) error { return workspace.CheckWritable(tx, ws, o.Token, o.Epoch) })
		}
		if want == nil {
			if err != nil {
				h.fatalf("invariant 8: %s (pending %v, epoch %d): AssertWritable = %v, want nil", what, pm != nil, epoch, err)
			}
			return
		}
		expectErr(h, fmt.Sprintf("invariant 8: %s in %s (reserved at epoch %d)", what, ws, epoch), err, want)
	}
	if pm == nil && h.dueIn(ws) != nil {
		// A context-pressure transfer is due there (invariant 11): it
		// holds the workspace as a reservation would.
		assert("a write without an owner while a context-pressure transfer is due", workspace.Owner{}, session.ErrWorkspaceBusy)
		return
	}
	if pm == nil {
		assert("a write without an owner", workspace.Owner{}, nil)
		if haveCur {
			assert("the last owner once released", workspace.Owner{Token: cur, Epoch: epoch}, nil)
		}
		return
	}
	assert("a write without an owner", workspace.Owner{}, session.ErrWorkspaceBusy)
	if pm.uncertain || !knownEpoch {
		return
	}
	assert("a wrong token at the current epoch", workspace.Owner{Token: baton.NewToken(), Epoch: epoch}, session.ErrWorkspaceBusy)
	if oldEpoch > 0 {
		assert("the owner token of an earlier take", workspace.Owner{Token: old, Epoch: oldEpoch}, workspace.ErrStaleEpoch)
	}
	if haveCur {
		assert("the current owner", workspace.Owner{Token: cur, Epoch: epoch}, nil)
		if epoch > 1 {
			assert("the current token at an earlier epoch", workspace.Owner{Token: cur, Epoch: epoch - 1}, workspace.ErrStaleEpoch)
		}
		assert("the current token at a later epoch", workspace.Owner{Token: cur, Epoch: epoch + 1}, workspace.ErrStaleEpoch)
	}
}

// checkLease is invariant 8's lease: a held reservation's lease is held by
// the node the model says took it last, runs no further than one TTL from
// now, has not lapsed while its holder runs, and (nobody else may renew
// it) runs no further than one TTL past the moment its holder stopped
// running.
func (h *harness) checkLease(ws baton.WorkspaceID, pm *model, res store.Reservation) {
	h.t.Helper()
	now := h.clk.Now()
	if res.LeaseExpires.After(now.Add(leaseTTL)) {
		h.fatalf("invariant 8: %s's lease (held by %q) runs until %s, past now (%s) plus the TTL", ws, res.LeaseHolder, res.LeaseExpires.Format("15:04:05"), now.Format("15:04:05"))
	}
	if n := h.nodeByID(res.LeaseHolder); n != nil && n.gate.get() == nodeUp && !res.LeaseExpires.After(now) {
		h.fatalf("invariant 8: %s's lease is held by %s, which runs, but lapsed at %s (now %s)", ws, n.id, res.LeaseExpires.Format("15:04:05"), now.Format("15:04:05"))
	}
	if gone, ok := h.goneAt[res.LeaseHolder]; ok && res.LeaseExpires.After(gone.Add(leaseTTL)) {
		h.fatalf("invariant 8: %s's lease is held by %s, gone since %s, yet runs until %s: renewed by another node", ws, res.LeaseHolder, gone.Format("15:04:05"), res.LeaseExpires.Format("15:04:05"))
	}
	if pm != nil && !pm.uncertain && pm.takenBy != nil && res.LeaseHolder != pm.takenBy.id {
		h.fatalf("invariant 8: %s's lease is held by %q, but %s (life %d) took it last (%s)", ws, res.LeaseHolder, pm.takenBy.id, pm.takenLife, pm.id)
	}
}
