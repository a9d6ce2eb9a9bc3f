package handofftest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/storetest"
)

func (h *harness) actions() map[string]func(*rapid.T) {
	return map[string]func(*rapid.T){
		"":                 func(*rapid.T) { h.check() },
		"create":           h.actCreate,
		"replay":           h.actReplay,
		"mismatch":         h.actMismatch,
		"createStale":      h.actStale,
		"createMalformed":  h.actMalformed,
		"createConcurrent": h.actConcurrent,
		"decide":           h.actDecide,
		"decideBad":        h.actDecideBad,
		"stop":             h.actStop,
		"release":          h.actRelease,
		"advanceClock":     h.actAdvance,
		"report":           h.actReport,
		"lateReport":       h.actLateReport,
		"wakeup":           h.actWakeup,
		"ordinaryStart":    h.actOrdinary,
		"shutdown":         h.actShutdown,
		"crash":            h.actCrash,
	}
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

func (h *harness) current(ws baton.WorkspaceID) baton.SessionID {
	w, err := h.co.Sessions().Workspace(h.ctx, ws)
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
	h.setPlan(ws, drawPlan(t, ws, h.nextSeq()))
	return h.scriptStop(ws, "sourceStop")
}

func (h *harness) snapshot() storetest.Snapshot {
	s, err := storetest.TakeSnapshot(h.ctx, h.st, h.wss...)
	if err != nil {
		h.fatalf("snapshot: %v", err)
	}
	return s
}

// unchanged runs fn and fails if it changed the store or launched anything.
func (h *harness) unchanged(what string, fn func()) {
	before, launches := h.snapshot(), len(h.eng.Launches())
	fn()
	if d := storetest.Diff(before, h.snapshot()); d != "" {
		h.fatalf("%s changed the store (-before +after):\n%s", what, d)
	}
	if n := len(h.eng.Launches()); n != launches {
		h.fatalf("%s launched %d engine processes", what, n-launches)
	}
}

func (h *harness) track(got handoff.Handoff, req handoff.Request, sourceConfig baton.EngineConfig) *model {
	m := &model{id: got.ID, ws: req.Workspace, req: req, attempt: 1, summary: req.GenerateSummary,
		source: req.SourceSession, sourceConfig: sourceConfig, state: store.StateStopping}
	h.hs[got.ID] = m
	h.order = append(h.order, got.ID)
	h.movedOn[req.Workspace] = false
	return m
}

func (h *harness) actCreate(t *rapid.T) {
	ws := h.drawWS(t)
	req := h.newRequest(t, ws)
	if p := h.pendingIn(ws); p != nil {
		h.unchanged("create while pending", func() {
			_, err := h.co.Create(h.ctx, req)
			expectErr(h, "create while pending", err, handoff.ErrTransferPending)
		})
		return
	}
	srcCfg := h.workspaceConfig(ws)
	confirmed := h.begin(t, ws)
	got, err := h.co.Create(h.ctx, req)
	if err != nil {
		h.fatalf("create %+v: %v", req, err)
	}
	m := h.track(got, req, srcCfg)
	h.settleFromStopping(m, confirmed)
	h.await()
}

func (h *harness) workspaceConfig(ws baton.WorkspaceID) baton.EngineConfig {
	w, err := h.co.Sessions().Workspace(h.ctx, ws)
	if err != nil {
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
	req := m.req
	// The same request in another spelling: white space around the ids.
	req.RequestID = "  " + req.RequestID + "\t"
	req.Target.Model = " " + req.Target.Model
	h.unchanged("exact replay", func() {
		got, err := h.co.Create(h.ctx, req)
		if err != nil || got.ID != m.id {
			h.fatalf("replay of %s: %v, %v", m.id, got.ID, err)
		}
	})
}

func (h *harness) actMismatch(t *rapid.T) {
	m := h.drawModel(t)
	req := m.req
	if rapid.Bool().Draw(t, "flipSummary") {
		req.GenerateSummary = !req.GenerateSummary
	} else {
		req.Target.PermissionMode = "other-" + req.Target.PermissionMode
	}
	h.unchanged("replay with another fingerprint", func() {
		_, err := h.co.Create(h.ctx, req)
		expectErr(h, "fingerprint mismatch", err, handoff.ErrIdempotencyMismatch)
	})
}

func (h *harness) actStale(t *rapid.T) {
	ws := h.drawWS(t)
	req := h.newRequest(t, ws)
	req.SourceSession = "ses_gone"
	want := handoff.ErrSourceChanged
	if h.pendingIn(ws) != nil {
		want = handoff.ErrTransferPending
	}
	h.unchanged("stale source", func() {
		_, err := h.co.Create(h.ctx, req)
		expectErr(h, "stale source", err, want)
	})
}

func (h *harness) actMalformed(t *rapid.T) {
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
		if h.pendingIn(ws) != nil {
			h.unchanged("unknown engine while pending", func() {
				_, err := h.co.Create(h.ctx, req)
				expectErr(h, "unknown engine while pending", err, handoff.ErrTransferPending)
			})
			return
		}
	}
	h.unchanged("malformed create", func() {
		_, err := h.co.Create(h.ctx, req)
		expectErr(h, "malformed create", err, handoff.ErrInvalidRequest)
	})
}

func (h *harness) actConcurrent(t *rapid.T) {
	ws := h.drawWS(t)
	if h.pendingIn(ws) != nil {
		t.Skip("pending")
	}
	req := h.newRequest(t, ws)
	srcCfg := h.workspaceConfig(ws)
	confirmed := h.begin(t, ws)
	var wg sync.WaitGroup
	got := make([]handoff.Handoff, 3)
	errs := make([]error, 3)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], errs[i] = h.co.Create(h.ctx, req) }()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i].ID != got[0].ID {
			h.fatalf("concurrent duplicate creates: %v / %v (ids %s, %s)", errs[i], errs[0], got[i].ID, got[0].ID)
		}
	}
	m := h.track(got[0], req, srcCfg)
	h.settleFromStopping(m, confirmed)
	h.await()
}

func (h *harness) actDecide(t *rapid.T) {
	m := h.drawModel(t)
	action := rapid.SampledFrom([]handoff.Action{handoff.Retry, handoff.Skip, handoff.Cancel}).Draw(t, "action")
	switch {
	case m.state.Terminal():
		h.unchanged("decide on a terminal handoff", func() {
			got, err := h.co.Decide(h.ctx, m.ws, m.id, action)
			if err != nil || got.State != m.state {
				h.fatalf("decide %s on %s: %v, %v", action, m.state, got.State, err)
			}
		})
		return
	case action == handoff.Cancel:
		h.cancel(m, func() error { _, err := h.co.Decide(h.ctx, m.ws, m.id, handoff.Cancel); return err })
		return
	case m.stopUnconfirmed:
		h.unchanged("retry with an unconfirmed stop", func() {
			_, err := h.co.Decide(h.ctx, m.ws, m.id, action)
			expectErr(h, "retry with an unconfirmed stop", err, handoff.ErrStopUnconfirmed)
		})
		return
	case m.state != store.StateFailed && m.state != store.StateInterrupted:
		h.unchanged("retry while running", func() {
			_, err := h.co.Decide(h.ctx, m.ws, m.id, action)
			expectErr(h, "retry while running", err, handoff.ErrTransferRunning)
		})
		return
	}
	confirmed := h.begin(t, m.ws)
	if _, err := h.co.Decide(h.ctx, m.ws, m.id, action); err != nil {
		h.fatalf("decide %s on %s: %v", action, m.state, err)
	}
	m.attempt++
	if action == handoff.Skip {
		m.summary, m.report = false, ""
	}
	h.settleFromStopping(m, confirmed)
	h.await()
}

// cancel scripts the stop of what runs in m's workspace, runs do, and
// predicts cancelled (confirmed) or failed with the stop unconfirmed.
func (h *harness) cancel(m *model, do func() error) {
	confirmed := h.scriptStop(m.ws, "cancelStop")
	if err := do(); err != nil {
		h.fatalf("cancel %s: %v", m.id, err)
	}
	if confirmed {
		m.state, m.stopUnconfirmed = store.StateCancelled, false
	} else {
		m.state, m.stopUnconfirmed = store.StateFailed, true
	}
	h.await()
}

func (h *harness) actDecideBad(t *rapid.T) {
	m := h.drawModel(t)
	other := h.wss[0]
	if other == m.ws {
		other = h.wss[1]
	}
	h.unchanged("bad decisions", func() {
		_, err := h.co.Decide(h.ctx, m.ws, m.id, "explode")
		expectErr(h, "unknown action", err, handoff.ErrInvalidRequest)
		_, err = h.co.Decide(h.ctx, other, m.id, handoff.Cancel)
		expectErr(h, "another workspace's handoff", err, handoff.ErrNotFound)
		_, err = h.co.Decide(h.ctx, m.ws, "hof_unknown", handoff.Retry)
		expectErr(h, "unknown handoff", err, handoff.ErrNotFound)
	})
}

func (h *harness) actStop(t *rapid.T) {
	ws := h.drawWS(t)
	if m := h.pendingIn(ws); m != nil {
		h.cancel(m, func() error { _, err := h.co.Stop(h.ctx, ws); return err })
		return
	}
	if _, err := h.co.Stop(h.ctx, ws); err != nil {
		h.fatalf("stop %s: %v", ws, err)
	}
	h.await()
}

func (h *harness) actRelease(t *rapid.T) {
	var held []*model
	for _, id := range h.order {
		if m := h.hs[id]; m.state == store.StateStarting {
			held = append(held, m)
		}
	}
	if len(held) == 0 {
		t.Skip("no held target")
	}
	m := rapid.SampledFrom(held).Draw(t, "held")
	got, err := h.load(m.id)
	if err != nil {
		h.fatalf("load: %v", err)
	}
	l := h.targetLaunch(m, got.TargetSession)
	if rapid.Bool().Draw(t, "ready") {
		l.Proc.Release("")
		m.state = store.StateCompleted
	} else {
		l.Proc.Reject()
		m.state = store.StateFailed
	}
	h.await()
}

func (h *harness) actAdvance(t *rapid.T) {
	var gen []*model
	for _, id := range h.order {
		if m := h.hs[id]; m.state == store.StateGenerating {
			gen = append(gen, m)
		}
	}
	if len(gen) == 0 {
		t.Skip("nothing generating")
	}
	confirmed := map[*model]bool{}
	for _, m := range gen {
		confirmed[m] = h.scriptStop(m.ws, "generationStop")
	}
	h.clk.Advance(genTimeout)
	for _, m := range gen {
		switch {
		case confirmed[m] && m.report != "":
			h.settleFromStarting(m)
		default:
			m.state, m.stopUnconfirmed = store.StateFailed, m.stopUnconfirmed || !confirmed[m]
		}
	}
	h.await()
}

// actReport submits a report with the current attempt's own credentials.
func (h *harness) actReport(t *rapid.T) {
	m := h.drawModel(t)
	if m.state != store.StateGenerating {
		t.Skip("not generating")
	}
	l := h.reportLaunch(m)
	cred := l.Req.Report
	text := rapid.SampledFrom([]string{m.report, "another report " + itoa(h.nextSeq()), "  " + h.planOf(m.ws).reportText + "\n"}).Draw(t, "text")
	if strings.TrimSpace(text) == "" {
		text = "a report"
	}
	err := h.co.SubmitReport(h.ctx, m.ws, m.id, cred.Token.Reveal(), text)
	switch trimmed := strings.TrimSpace(text); {
	case m.report == "":
		if err != nil {
			h.fatalf("first report with the right token: %v", err)
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
}

// actLateReport submits a report with a forged token, or with the token of
// an earlier attempt (a late callback): it must be refused and change
// nothing.
func (h *harness) actLateReport(t *rapid.T) {
	m := h.drawModel(t)
	tok := baton.NewToken().Reveal()
	for _, l := range h.eng.Launches() {
		if r := l.Req.Report; r != nil && r.Handoff == m.id && (r.Attempt != m.attempt || m.state != store.StateGenerating) && rapid.Bool().Draw(t, "useOldToken") {
			tok = r.Token.Reveal()
			break
		}
	}
	h.unchanged("report with a stale or forged token", func() {
		err := h.co.SubmitReport(h.ctx, m.ws, m.id, tok, "late report "+itoa(h.nextSeq()))
		if !errors.Is(err, handoff.ErrTokenRejected) && !errors.Is(err, handoff.ErrGenerationInactive) {
			h.fatalf("stale report: %v, want ErrTokenRejected or ErrGenerationInactive", err)
		}
	})
}

func (h *harness) actWakeup(t *rapid.T) {
	ws := h.drawWS(t)
	sessions, err := h.co.Sessions().Sessions(h.ctx, ws)
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
	w, err := h.co.Sessions().ScheduleWakeup(h.ctx, store.Wakeup{Workspace: ws, Session: pin, Prompt: "wake " + itoa(h.nextSeq()), At: h.clk.Now().Add(24 * time.Hour)})
	if err != nil {
		h.fatalf("schedule wakeup: %v", err)
	}
	h.wakeups[w.ID] = w
}

func (h *harness) actOrdinary(t *rapid.T) {
	ws := h.drawWS(t)
	_, err := h.co.Sessions().Start(h.ctx, session.TurnRequest{Workspace: ws, Prompt: "ordinary " + itoa(h.nextSeq())})
	_, running := h.co.Sessions().Running(ws)
	switch {
	case h.pendingIn(ws) != nil:
		expectErr(h, "ordinary start while reserved", err, session.ErrWorkspaceBusy)
	case err != nil && !(running && errors.Is(err, session.ErrSessionRunning)):
		h.fatalf("ordinary start: %v", err)
	case err == nil:
		h.movedOn[ws] = true
	}
	h.await()
}

// restart replaces the Coordinator with a new one on the same store and
// runs Reconcile, which must launch nothing.
func (h *harness) restart() {
	h.setCoordinator(h.newCoordinator())
	before := len(h.eng.Launches())
	if _, err := h.co.Reconcile(h.ctx); err != nil {
		h.fatalf("reconcile: %v", err)
	}
	for _, id := range h.order {
		if m := h.hs[id]; m.pending() {
			// The dead process's engine processes died with it (the
			// scripted engine is not a Reaper): nothing may run, so no stop
			// is left unconfirmed.
			m.state, m.stopUnconfirmed = store.StateInterrupted, false
		}
	}
	h.await()
	if n := len(h.eng.Launches()); n != before {
		h.fatalf("Reconcile launched %d engine processes", n-before)
	}
}

func (h *harness) actShutdown(*rapid.T) {
	for _, ws := range h.wss {
		if p := h.runningProc(ws); p != nil {
			p.SetStopOutcome(engine.Stopped)
		}
	}
	ctx, cancel := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancel()
	if err := h.co.Shutdown(ctx); err != nil {
		h.fatalf("shutdown: %v", err)
	}
	for _, id := range h.order {
		if m := h.hs[id]; m.pending() {
			// Every stop was confirmed: nothing may run, so nothing is
			// left unconfirmed.
			m.state, m.stopUnconfirmed = store.StateInterrupted, false
		}
	}
	h.await()
	h.eng.CrashAll() // the host process exits
	h.restart()
}

func (h *harness) actCrash(*rapid.T) {
	old := h.co
	dead, cancel := context.WithCancel(h.ctx)
	cancel()
	_ = old.Shutdown(dead) // a crash: no graceful transition runs
	h.eng.CrashAll()
	ctx, cancelWait := context.WithTimeout(h.ctx, 10*time.Second)
	defer cancelWait()
	if err := old.Sessions().Close(ctx); err != nil {
		h.fatalf("waiting for the dead coordinator's watchers: %v", err)
	}
	h.restart()
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
