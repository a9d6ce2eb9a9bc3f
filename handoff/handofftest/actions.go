package handofftest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/storetest"
	"github.com/batonhq/baton/transcript"
)

func (h *harness) actions() map[string]func(*rapid.T) {
	acts := map[string]func(*rapid.T){
		"": func(*rapid.T) {
			if !h.ended {
				h.await() // every invariant, once what the last step set off has come to rest
			}
		},
		"create":            h.actCreate,
		"replay":            h.actReplay,
		"mismatch":          h.actMismatch,
		"createStale":       h.actStale,
		"createMalformed":   h.actMalformed,
		"createConcurrent":  h.actConcurrent,
		"unknownWorkspace":  h.actUnknownWorkspace,
		"decide":            h.actDecide,
		"decideBad":         h.actDecideBad,
		"stop":              h.actStop,
		"release":           h.actRelease,
		"advanceClock":      h.actAdvance,
		"report":            h.actReport,
		"lateReport":        h.actLateReport,
		"invalidReport":     h.actInvalidReport,
		"wakeup":            h.actWakeup,
		"fireDue":           h.actFireDue,
		"ordinaryStart":     h.actOrdinary,
		"archive":           h.actArchive,
		"shutdown":          h.actShutdown,
		"crash":             h.actCrash,
		"restart":           h.actRestart,
		"reconcile":         h.actReconcile,
		"message":           h.actMessage,
		"cancelInstruction": h.actCancelInstruction,
		"resendInstruction": h.actResendInstruction,
		"turnEnds":          h.actTurnEnds,
		"deliverPending":    h.actDeliverPending,
		"queueBurst":        h.actQueueBurst,
		"queueAcross":       h.actQueueAcrossTransfer,
		"reap":              h.actReap,
		"slowStop":          h.actSlowStop,
		"setPressure":       h.actSetPressure,
		"pressureTurn":      h.actPressureTurn,
	}
	if len(h.nodes) > 1 {
		acts["freeze"] = h.actFreeze
		acts["thaw"] = h.actThaw
		acts["lateCallback"] = h.actLateCallback
		acts["takeOver"] = h.actTakeOver
		acts["stopThenCrash"] = h.actStopThenCrash
	}
	return acts
}

func (h *harness) drawWS(t *rapid.T) baton.WorkspaceID {
	return rapid.SampledFrom(h.wss).Draw(t, "workspace")
}

func (h *harness) drawModel(t *rapid.T) *model {
	if len(h.order) == 0 {
		t.Skip("no handoff yet")
	}
	return h.hs[rapid.SampledFrom(h.order).Draw(t, "handoff")]
}

// drawUp draws a node that is up; it skips the step when none is.
func (h *harness) drawUp(t *rapid.T) *node {
	return h.drawNode(t, "node", nodeUp)
}

// drawNode draws, by name, a node in one of the states; it skips the step
// when none is.
func (h *harness) drawNode(t *rapid.T, label string, states ...nodeState) *node {
	var names []string
	byName := map[string]*node{}
	for _, n := range h.nodes {
		for _, st := range states {
			if n.gate.get() == st {
				names = append(names, n.id)
				byName[n.id] = n
			}
		}
	}
	if len(names) == 0 {
		t.Skipf("no node is %v", states)
	}
	return byName[rapid.SampledFrom(names).Draw(t, label)]
}

// runsOn returns the node whose live process runs in ws, else ws's home
// node: a host routes a workspace's ordinary messages to the node that
// runs its agent.
func (h *harness) runsOn(ws baton.WorkspaceID) *node {
	ls := h.eng.Launches()
	for i := len(ls) - 1; i >= 0; i-- {
		if p := ls[i].Proc; p != nil && ls[i].Req.Workspace == ws && p.Running() {
			li, ok := h.launchOf(ls[i].N)
			if ok {
				return h.nodes[li.node]
			}
		}
	}
	return h.homeNode(ws)
}

func (h *harness) current(ws baton.WorkspaceID) baton.SessionID {
	var w store.Workspace
	err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { w, err = tx.GetWorkspace(ws); return err })
	if err != nil {
		h.fatalf("workspace %s: %v", ws, err)
	}
	return w.CurrentSession
}

// newRequest draws a fresh, valid request for ws.
func (h *harness) newRequest(t *rapid.T, ws baton.WorkspaceID) handoff.Request {
	return handoff.Request{
		Workspace: ws, RequestID: "req-" + itoa(h.nextSeq()), SourceSession: h.current(ws),
		GenerateSummary: rapid.Bool().Draw(t, "summary"),
		Target:          rapid.SampledFrom(configs).Draw(t, "target"),
	}
}

// begin scripts a new attempt in ws and returns whether the stop of what
// runs there will be confirmed.
func (h *harness) begin(t *rapid.T, ws baton.WorkspaceID) bool {
	h.setPlan(ws, drawPlan(t, ws, h.nextSeq(), len(h.nodes)))
	return h.scriptStop(ws, "sourceStop")
}

func (h *harness) snapshot() storetest.Snapshot {
	s, err := storetest.TakeSnapshot(h.ctx, h.raw, h.wss...)
	if err != nil {
		h.fatalf("snapshot: %v", err)
	}
	// Lease renewals are the only writes a step may race with.
	for id, w := range s.ByWorkspace {
		if w.Reservation != nil {
			r := *w.Reservation
			r.LeaseExpires, r.UpdatedAt = zeroTime, zeroTime
			w.Reservation = &r
			s.ByWorkspace[id] = w
		}
	}
	return s
}

// unchanged runs fn and fails if it changed the store or launched anything.
// A workspace whose instruction queue is uncertain may see a delivery
// under way from an earlier step land meanwhile (an ordinary turn): such a
// workspace is then left out of the comparison.
func (h *harness) unchanged(what string, fn func()) {
	before, launches := h.snapshot(), len(h.eng.Launches())
	fn()
	after := h.snapshot()
	late := map[baton.WorkspaceID]bool{}
	n := 0
	for _, l := range h.eng.Launches()[launches:] {
		if ws := l.Req.Workspace; h.instrUncertain[ws] && l.Req.Turn == transcript.Normal && l.Req.Attempt == 0 {
			late[ws] = true
			h.log.add(fmt.Sprintf("   a queued delivery landed in %s during %s", ws, what))
			continue
		}
		n++
	}
	if len(late) > 0 {
		before, after = withoutWorkspaces(before, late), withoutWorkspaces(after, late)
	}
	if d := storetest.Diff(before, after); d != "" {
		h.fatalf("%s changed the store (-before +after):\n%s", what, d)
	}
	if n != 0 {
		h.fatalf("%s launched %d engine processes", what, n)
	}
}

// withoutWorkspaces returns s without what it holds of the workspaces in
// drop.
func withoutWorkspaces(s storetest.Snapshot, drop map[baton.WorkspaceID]bool) storetest.Snapshot {
	s.Workspaces = slices.DeleteFunc(slices.Clone(s.Workspaces), func(w store.Workspace) bool { return drop[w.ID] })
	s.Pending = slices.DeleteFunc(slices.Clone(s.Pending), func(x store.Handoff) bool { return drop[x.Workspace] })
	s.Due = slices.DeleteFunc(slices.Clone(s.Due), func(x store.Wakeup) bool { return drop[x.Workspace] })
	s.Live = slices.DeleteFunc(slices.Clone(s.Live), func(x store.Launch) bool { return drop[x.Workspace] })
	s.Queued = slices.DeleteFunc(slices.Clone(s.Queued), func(x store.Continuation) bool { return drop[x.Workspace] })
	by := map[baton.WorkspaceID]storetest.WorkspaceSnapshot{}
	for id, w := range s.ByWorkspace {
		if !drop[id] {
			by[id] = w
		}
	}
	s.ByWorkspace = by
	return s
}

func (h *harness) track(got store.Handoff, req handoff.Request, sourceConfig baton.EngineConfig) *model {
	m := &model{id: got.ID, ws: req.Workspace, req: req, attempt: 1, summary: req.GenerateSummary,
		source: req.SourceSession, sourceConfig: sourceConfig, state: store.StateStopping}
	h.mu.Lock()
	h.hs[got.ID] = m
	h.mu.Unlock()
	h.order = append(h.order, got.ID)
	h.movedOn[req.Workspace] = false
	h.took(req.Workspace, "create")
	return m
}

// createNode is the node a Create for ws goes to: any node that is up while
// nothing runs in the workspace, else the node that runs its process (a
// node can stop only what it launched; see the package's Caveats).
func (h *harness) createNode(t *rapid.T, ws baton.WorkspaceID) *node {
	if h.cfg.Unsteered {
		return h.drawUp(t)
	}
	if h.staleRow(ws) {
		t.Skip("a node that is gone left a session row of the workspace running")
	}
	if len(h.runningProcs(ws)) == 0 {
		return h.drawUp(t)
	}
	if h.orphaned(ws) {
		t.Skip("the workspace's agent runs on a node that is not up")
	}
	n := h.runsOn(ws)
	if n.gate.get() != nodeUp {
		t.Skip("the node running the workspace is not up")
	}
	return n
}

// reapsElsewhere reports whether a Create on n stops ws's source by reaping
// another node's launch (only Unsteered sends a Create there): n runs
// nothing in ws, and the shared engine.Reaper kills the process whatever
// its script says, so the stop is confirmed.
func (h *harness) reapsElsewhere(ws baton.WorkspaceID, n *node) bool {
	return h.cfg.Unsteered && len(h.runningProcs(ws)) > 0 && !h.runsHere(ws, n)
}

func (h *harness) actCreate(t *rapid.T) { h.createIn(t, h.drawWS(t)) }

// createIn requests a transfer in ws and predicts it.
func (h *harness) createIn(t *rapid.T, ws baton.WorkspaceID) {
	n := h.createNode(t, ws)
	req := h.newRequest(t, ws)
	switch {
	case h.archived[ws]:
		h.unchanged("create in an archived workspace", func() {
			_, err := n.co.Create(h.ctx, req)
			expectErr(h, "create in an archived workspace", err, session.ErrArchived)
		})
		return
	case h.pendingIn(ws) != nil:
		h.unchanged("create while pending", func() {
			_, err := n.co.Create(h.ctx, req)
			expectErr(h, "create while pending", err, handoff.ErrTransferPending)
		})
		return
	}
	srcCfg := h.workspaceConfig(ws)
	orphan := h.orphaned(ws)
	confirmed := h.begin(t, ws)
	if h.reapsElsewhere(ws, n) {
		confirmed, orphan = true, false
	}
	got, err := n.co.Create(h.ctx, req)
	if err != nil {
		h.fatalf("create %+v on %s: %v", req, n.id, err)
	}
	h.supersede(ws)
	m := h.track(got, req, srcCfg)
	m.takenBy, m.takenLife = n, n.life
	h.settleFromStopping(m, confirmed)
	m.uncertain = orphan
	h.await()
	h.forgedResend(t, m, n)
}

// workspaceConfig is the configuration the model expects a transfer to
// restore: the current session's, else the workspace's.
func (h *harness) workspaceConfig(ws baton.WorkspaceID) baton.EngineConfig {
	var w store.Workspace
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { w, err = tx.GetWorkspace(ws); return err }); err != nil {
		h.fatalf("workspace: %v", err)
	}
	if w.CurrentSession != "" {
		if s, err := h.session(w.CurrentSession); err == nil {
			return s.Config
		}
	}
	return w.Config
}

func (h *harness) actReplay(t *rapid.T) {
	m := h.drawModel(t)
	n := h.drawUp(t)
	req := m.req
	// The same request in another spelling: white space around the ids.
	req.RequestID = "  " + req.RequestID + "\t"
	req.Target.Model = " " + req.Target.Model
	h.unchanged("exact replay", func() {
		got, err := n.co.Create(h.ctx, req)
		if err != nil || got.ID != m.id {
			h.fatalf("replay of %s on %s: %v, %v", m.id, n.id, got.ID, err)
		}
	})
}

func (h *harness) actMismatch(t *rapid.T) {
	m := h.drawModel(t)
	n := h.drawUp(t)
	req := m.req
	if rapid.Bool().Draw(t, "flipSummary") {
		req.GenerateSummary = !req.GenerateSummary
	} else {
		req.Target.PermissionMode = "other-" + req.Target.PermissionMode
	}
	h.unchanged("replay with another fingerprint", func() {
		_, err := n.co.Create(h.ctx, req)
		expectErr(h, "fingerprint mismatch", err, handoff.ErrIdempotencyMismatch)
	})
}

func (h *harness) actStale(t *rapid.T) {
	n := h.drawUp(t)
	ws := h.drawWS(t)
	req := h.newRequest(t, ws)
	req.SourceSession = "ses_gone"
	want := handoff.ErrSourceChanged
	switch {
	case h.archived[ws]:
		want = session.ErrArchived
	case h.pendingIn(ws) != nil:
		want = handoff.ErrTransferPending
	}
	h.unchanged("stale source", func() {
		_, err := n.co.Create(h.ctx, req)
		expectErr(h, "stale source", err, want)
	})
}

func (h *harness) actMalformed(t *rapid.T) {
	n := h.drawUp(t)
	ws := h.drawWS(t)
	req := h.newRequest(t, ws)
	switch rapid.IntRange(0, 3).Draw(t, "malformation") {
	case 0:
		req.RequestID = " \t "
	case 1:
		req.RequestID = strings.Repeat("x", baton.MaxIDLen+1)
	case 2:
		req.Target = baton.EngineConfig{Model: "no-engine"}
	case 3:
		req.Target = baton.EngineConfig{Engine: "nope"}
		var want error
		switch {
		case h.archived[ws]:
			want = session.ErrArchived
		case h.pendingIn(ws) != nil:
			want = handoff.ErrTransferPending
		}
		if want != nil {
			h.unchanged("unknown engine in a busy workspace", func() {
				_, err := n.co.Create(h.ctx, req)
				expectErr(h, "unknown engine in a busy workspace", err, want)
			})
			return
		}
	}
	h.unchanged("malformed create", func() {
		_, err := n.co.Create(h.ctx, req)
		expectErr(h, "malformed create", err, handoff.ErrInvalidRequest)
	})
}

// actConcurrent sends one request to every up node at once: one handoff.
func (h *harness) actConcurrent(t *rapid.T) {
	ws := h.drawWS(t)
	if h.pendingIn(ws) != nil || h.archived[ws] {
		t.Skip("busy or archived")
	}
	var up []*node
	for _, n := range h.nodes {
		if n.gate.get() == nodeUp {
			up = append(up, n, n)
		}
	}
	if len(up) == 0 {
		t.Skip("no node is up")
	}
	if !h.cfg.Unsteered && (len(h.runningProcs(ws)) > 0 || h.staleRow(ws)) {
		n := h.createNode(t, ws)
		up = []*node{n, n, n}
	}
	req := h.newRequest(t, ws)
	srcCfg := h.workspaceConfig(ws)
	orphan := h.orphaned(ws)
	confirmed := h.begin(t, ws)
	for _, n := range up {
		if !h.reapsElsewhere(ws, n) {
			continue
		}
		// Whichever node wins, the model must know the stop's outcome:
		// one that reaps confirms it, so the node running the source
		// must too.
		if !confirmed {
			for _, p := range h.runningProcs(ws) {
				p.SetStopOutcome(engine.Stopped)
			}
		}
		confirmed, orphan = true, false
	}
	var wg sync.WaitGroup
	got := make([]store.Handoff, len(up))
	errs := make([]error, len(up))
	for i, n := range up {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], errs[i] = n.co.Create(h.ctx, req) }()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i].ID != got[0].ID {
			h.fatalf("concurrent duplicate creates: %v / %v (ids %s, %s)", errs[i], errs[0], got[i].ID, got[0].ID)
		}
	}
	m := h.track(got[0], req, srcCfg)
	if d := h.nodeByID(h.reservation(ws).LeaseHolder); d != nil {
		m.takenBy, m.takenLife = d, d.life
	}
	h.settleFromStopping(m, confirmed)
	m.uncertain = orphan
	h.await()
}

// actUnknownWorkspace sends requests naming a workspace that does not
// exist: each is refused as not found and changes nothing.
func (h *harness) actUnknownWorkspace(t *rapid.T) {
	n := h.drawUp(t)
	const ws = baton.WorkspaceID("ws-unknown")
	h.unchanged("requests on an unknown workspace", func() {
		_, err := n.co.Create(h.ctx, handoff.Request{Workspace: ws, RequestID: "req-unknown", Target: engineA})
		expectErr(h, "create on an unknown workspace", err, session.ErrNoWorkspace)
		_, err = n.co.Stop(h.ctx, ws)
		expectErr(h, "stop on an unknown workspace", err, session.ErrNoWorkspace)
		_, _, err = n.co.Current(h.ctx, ws)
		expectErr(h, "current of an unknown workspace", err, session.ErrNoWorkspace)
		if len(h.order) > 0 {
			_, err = n.co.Decide(h.ctx, ws, h.order[0], handoff.Cancel)
			expectErr(h, "decide on an unknown workspace", err, handoff.ErrNotFound)
		}
	})
}

func (h *harness) actDecide(t *rapid.T) {
	m := h.drawModel(t)
	n := h.drawUp(t)
	action := rapid.SampledFrom([]handoff.Action{handoff.Retry, handoff.Skip, handoff.Cancel}).Draw(t, "action")
	switch {
	case m.state.Terminal():
		h.unchanged("decide on a terminal handoff", func() {
			got, err := n.co.Decide(h.ctx, m.ws, m.id, action)
			if err != nil || got.State != m.state {
				h.fatalf("decide %s on %s: %v, %v", action, m.state, got.State, err)
			}
		})
		return
	case action == handoff.Cancel:
		h.cancel(t, m, func(ctx context.Context) error { _, err := n.co.Decide(ctx, m.ws, m.id, handoff.Cancel); return err })
		return
	case m.stopUnconfirmed:
		h.unchanged("retry with an unconfirmed stop", func() {
			_, err := n.co.Decide(h.ctx, m.ws, m.id, action)
			expectErr(h, "retry with an unconfirmed stop", err, handoff.ErrStopUnconfirmed)
		})
		return
	case m.state != store.StateFailed && m.state != store.StateInterrupted:
		h.unchanged("retry while running", func() {
			_, err := n.co.Decide(h.ctx, m.ws, m.id, action)
			expectErr(h, "retry while running", err, handoff.ErrTransferRunning)
		})
		return
	}
	h.decideOn(t, m, n, action)
}

// decideOn sends a retry or skip of failed or interrupted m to node n and
// predicts the new attempt.
func (h *harness) decideOn(t *rapid.T, m *model, n *node, action handoff.Action) {
	confirmed := h.begin(t, m.ws)
	if _, err := n.co.Decide(h.ctx, m.ws, m.id, action); err != nil {
		h.fatalf("decide %s on %s (node %s): %v", action, m.state, n.id, err)
	}
	m.attempt++
	h.took(m.ws, string(m.id))
	m.takenBy, m.takenLife = n, n.life
	if action == handoff.Skip {
		m.summary, m.report = false, ""
	}
	m.genDeadline, m.readyAt, m.readyBy = zeroTime, zeroTime, zeroTime
	h.settleFromStopping(m, confirmed)
	h.await()
}

// staleRow reports whether a session row of ws says running while the
// node that launched it is gone (crashed or shut down, not restarted).
func (h *harness) staleRow(ws baton.WorkspaceID) bool {
	var rows []store.Session
	_ = h.raw.View(h.ctx, func(tx store.Tx) (err error) { rows, err = tx.ListSessions(ws); return err })
	for _, s := range rows {
		if s.Status == store.SessionRunning && !h.sessionNodeUp(s.ID) {
			if n := h.lastLauncher(s.ID); n == nil || n.gate.get() != nodeFrozen {
				return true
			}
		}
	}
	return false
}

// nodeByID returns the node with instance id, nil when none has it.
func (h *harness) nodeByID(id string) *node {
	for _, n := range h.nodes {
		if n.id == id {
			return n
		}
	}
	return nil
}

// drivenByFrozen reports whether m's lease is held by a frozen node, which
// is the only one that may confirm its stop.
func (h *harness) drivenByFrozen(m *model) bool {
	r := h.reservation(m.ws)
	for _, n := range h.nodes {
		if n.id == r.LeaseHolder && r.Held {
			return n.gate.get() == nodeFrozen
		}
	}
	return false
}

// cancel scripts the stop of what runs in m's workspace, runs do, and
// predicts cancelled (confirmed) or failed with the stop unconfirmed,
// whichever node received it: the node that drives the transfer carries
// it out. When that node is gone and its lease lapsed, nobody can confirm
// the stop: failed, stop unconfirmed, and the receiving node takes the
// reservation over. (A stop for a node that is frozen, or gone with its
// lease still running, would wait for the lease: not generated.)
func (h *harness) cancel(t *rapid.T, m *model, stop func(context.Context) error) {
	// A Stop sent to a node that does not drive the transfer waits for the
	// driving node within its context: bounded, so that a stop nobody
	// carries out fails the step instead of hanging it.
	do := func() error {
		ctx, cancel := h.bounded()
		defer cancel()
		err := stop(ctx)
		if ctx.Err() != nil {
			h.fatalf("stop of %s (%s) was not carried out within %v by the node that drives it (%s)", m.id, m.state, h.cfg.Wait, h.reservation(m.ws).LeaseHolder)
		}
		return err
	}
	r := h.reservation(m.ws)
	if d := h.nodeByID(r.LeaseHolder); d != nil && d.gate.get() != nodeUp {
		if d.gate.get() == nodeFrozen || r.LeaseExpires.After(h.clk.Now()) {
			t.Skip("the driving node is frozen, or gone with its lease still running")
		}
		if err := do(); err != nil {
			h.fatalf("cancel %s: %v", m.id, err)
		}
		m.state, m.stopUnconfirmed, m.genDeadline, m.readyAt, m.readyBy = store.StateFailed, true, zeroTime, zeroTime, zeroTime
		h.took(m.ws, string(m.id))
		if d := h.nodeByID(h.reservation(m.ws).LeaseHolder); d != nil {
			m.takenBy, m.takenLife = d, d.life // the receiving node took it over
		}
		h.await()
		return
	}
	orphan := h.orphaned(m.ws)
	confirmed := h.scriptStop(m.ws, "cancelStop")
	// The driving node completes a confirmed stop by reaping what other
	// nodes or lives left live there; sometimes the reaper cannot confirm
	// any of it: the stop is not confirmed then, and those records stay
	// live.
	held := map[baton.WorkspaceID][]baton.LaunchID{}
	var rs reapScript
	if d := h.nodeByID(r.LeaseHolder); confirmed && d != nil && r.Held && r.Handoff == m.id {
		if rs = h.drawReap("cancelReap"); rs.out != "" {
			held[m.ws] = h.othersLive(m.ws, d)
			if h.anyRunning(held) {
				rs, held = reapScript{}, map[baton.WorkspaceID][]baton.LaunchID{} // see reconcileVia
			}
			confirmed = len(held[m.ws]) == 0
		}
	}
	disarm := h.armReap(rs)
	err := do()
	disarm()
	if err != nil {
		h.fatalf("cancel %s: %v", m.id, err)
	}
	h.stillLive("a stop of "+string(m.id)+" whose reaps were not confirmed", held)
	if confirmed {
		m.state, m.stopUnconfirmed = store.StateCancelled, false
	} else {
		m.state, m.stopUnconfirmed = store.StateFailed, true
	}
	m.uncertain = m.uncertain || orphan
	h.await()
}

func (h *harness) actDecideBad(t *rapid.T) {
	m := h.drawModel(t)
	n := h.drawUp(t)
	other := h.wss[0]
	if other == m.ws {
		other = h.wss[1]
	}
	h.unchanged("bad decisions", func() {
		_, err := n.co.Decide(h.ctx, m.ws, m.id, "explode")
		expectErr(h, "unknown action", err, handoff.ErrInvalidRequest)
		_, err = n.co.Decide(h.ctx, other, m.id, handoff.Cancel)
		expectErr(h, "another workspace's handoff", err, handoff.ErrNotFound)
		_, err = n.co.Decide(h.ctx, m.ws, "hof_unknown", handoff.Retry)
		expectErr(h, "unknown handoff", err, handoff.ErrNotFound)
	})
}

func (h *harness) actStop(t *rapid.T) {
	ws := h.drawWS(t)
	if m := h.pendingIn(ws); m != nil {
		n := h.drawUp(t)
		h.queueUncertain(ws) // the transfer's end races its target's
		h.cancel(t, m, func(ctx context.Context) error { _, err := n.co.Stop(ctx, ws); return err })
		return
	}
	n := h.runsOn(ws)
	if n.gate.get() != nodeUp {
		t.Skip("the node running the workspace is not up")
	}
	// A stopped turn delivers no queued instruction; the model cannot tell
	// what a process another node or life runs does.
	for _, p := range h.runningProcs(ws) {
		if !p.StopOutcome().Confirmed() || h.launchedBy(p.N()) != n {
			h.queueUncertain(ws)
		}
	}
	if _, err := n.co.Stop(h.ctx, ws); err != nil {
		h.fatalf("stop %s on %s: %v", ws, n.id, err)
	}
	h.movedOn[ws] = true
	h.await()
}

// actRelease resolves a held target's readiness, either way, on whatever
// node launched it.
func (h *harness) actRelease(t *rapid.T) {
	var held []*model
	for _, id := range h.order {
		if m := h.hs[id]; m.state == store.StateStarting && m.readyAt.IsZero() && !m.uncertain && !m.unspawned {
			held = append(held, m)
		}
	}
	if len(held) == 0 {
		t.Skip("no held target")
	}
	m := rapid.SampledFrom(held).Draw(t, "held")
	l := h.heldTarget(m)
	// Who drives the transfer is read before its target is released: the
	// completion that follows releases the reservation, and a read after
	// it would find no driver and keep the model at starting.
	driven := h.drivenByUp(m) // else nobody is there to learn of it (yet)
	next := store.StateCompleted
	switch rapid.IntRange(0, 2).Draw(t, "readiness") {
	case 0:
		l.Proc.Release("")
	case 1:
		l.Proc.Reject()
		next = store.StateFailed
	case 2: // the first turn ends right as readiness is confirmed
		l.Proc.Release("")
		l.Proc.Finish(0, nil)
	}
	if driven {
		m.state = next
	}
	h.await()
}

// actReport submits a report with the current attempt's own credentials,
// to any node.
func (h *harness) actReport(t *rapid.T) {
	m := h.drawModel(t)
	if m.state != store.StateGenerating || m.uncertain {
		t.Skip("not generating")
	}
	n := h.drawUp(t)
	l := h.reportLaunch(m)
	cred := l.Req.Report
	text := rapid.SampledFrom([]string{m.report, "another report " + itoa(h.nextSeq()), "  " + h.planOf(m.ws).reportText + "\n"}).Draw(t, "text")
	if strings.TrimSpace(text) == "" {
		text = "a report"
	}
	err := n.co.SubmitReport(h.ctx, m.ws, m.id, cred.Token.Reveal(), text)
	switch trimmed := strings.TrimSpace(text); {
	case m.report == "":
		if err != nil {
			h.fatalf("first report with the right token on %s: %v", n.id, err)
		}
		m.report = trimmed
	case m.report == trimmed:
		if err != nil {
			h.fatalf("same report again: %v", err)
		}
	default:
		expectErr(h, "a different report", err, handoff.ErrReportConflict)
	}
	h.await()
	h.forgedResend(t, m, n)
}

// forgedResend sends the report generating m stores again, with a forged
// token: unauthenticated, so refused as such, however well it matches.
func (h *harness) forgedResend(t *rapid.T, m *model, n *node) {
	if m.state != store.StateGenerating || m.report == "" || m.uncertain || n.gate.get() != nodeUp || !rapid.Bool().Draw(t, "forgedResend") {
		return
	}
	h.unchanged("the stored report with a forged token", func() {
		err := n.co.SubmitReport(h.ctx, m.ws, m.id, baton.NewToken().Reveal(), m.report)
		expectErr(h, "the stored report with a forged token", err, handoff.ErrTokenRejected)
	})
}

// actLateReport submits a report with a forged token, or with the token of
// an attempt that no longer generates (a late callback), carrying new text
// or the text already stored (a resend), to the handoff's workspace or to
// another: it must be refused for the reason the model names and change
// nothing.
func (h *harness) actLateReport(t *rapid.T) {
	m := h.drawModel(t)
	var stored []*model // a resend of the text already stored is the telling case
	for _, id := range h.order {
		if h.hs[id].report != "" {
			stored = append(stored, h.hs[id])
		}
	}
	if len(stored) > 0 && rapid.Bool().Draw(t, "storedReport") {
		m = stored[rapid.IntRange(0, len(stored)-1).Draw(t, "withReport")]
	}
	n := h.drawUp(t)
	tok := baton.NewToken().Reveal() // forged
	var old []string
	for _, l := range h.eng.Launches() {
		if r := l.Req.Report; r != nil && r.Handoff == m.id && (r.Attempt != m.attempt || m.state != store.StateGenerating) {
			old = append(old, r.Token.Reveal())
		}
	}
	if len(old) > 0 && rapid.Bool().Draw(t, "oldToken") {
		tok = old[rapid.IntRange(0, len(old)-1).Draw(t, "lateToken")]
	}
	texts := []string{"late report " + itoa(h.nextSeq())}
	if m.report != "" {
		texts = append(texts, m.report, "\n"+m.report+"  ")
	}
	text := rapid.SampledFrom(texts).Draw(t, "lateText")
	ws := m.ws
	if rapid.Bool().Draw(t, "otherWorkspace") {
		ws = h.otherWS(m.ws)
	}
	var want error
	switch {
	case ws != m.ws:
		want = handoff.ErrNotFound // a handoff of another workspace is not found
	case m.uncertain && activeState(m.state):
		// The model does not know whether it still generates.
	case m.state != store.StateGenerating:
		want = handoff.ErrGenerationInactive
	default:
		want = handoff.ErrTokenRejected
	}
	h.unchanged("report with a stale or forged token", func() {
		err := n.co.SubmitReport(h.ctx, ws, m.id, tok, text)
		if want != nil {
			expectErr(h, fmt.Sprintf("late report to %s (handoff %s, model %s)", ws, m.id, m.state), err, want)
		} else if !errors.Is(err, handoff.ErrTokenRejected) && !errors.Is(err, handoff.ErrGenerationInactive) {
			h.fatalf("stale report: %v, want ErrTokenRejected or ErrGenerationInactive", err)
		}
	})
}

// otherWS returns a workspace other than ws.
func (h *harness) otherWS(ws baton.WorkspaceID) baton.WorkspaceID {
	if ws == h.wss[0] {
		return h.wss[1]
	}
	return h.wss[0]
}

// actInvalidReport submits text that is no report (blank, or over the
// limit) with the right token: refused, nothing changes.
func (h *harness) actInvalidReport(t *rapid.T) {
	m := h.drawModel(t)
	if m.state != store.StateGenerating || m.uncertain {
		t.Skip("not generating")
	}
	n := h.drawUp(t)
	tok := h.reportLaunch(m).Req.Report.Token.Reveal()
	text := rapid.SampledFrom([]string{"", " \n\t ", strings.Repeat("é", baton.MaxReportChars+1), "bad \xff utf-8"}).Draw(t, "invalidText")
	// Refused, and kept in the handoff's error for the user (a valid
	// token's refusal); the state and the report do not change.
	err := n.co.SubmitReport(h.ctx, m.ws, m.id, tok, text)
	expectErr(h, "an invalid report", err, handoff.ErrInvalidRequest)
	h.await()
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// bounded returns a context for a call that must not hang the harness.
func (h *harness) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(h.ctx, h.cfg.Wait)
}
