package handofftest

import (
	"errors"
	"fmt"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// reportPlan scripts a report-only turn.
type reportPlan int

const (
	reportClean      reportPlan = iota // right token, then a clean exit
	reportHang                         // right token, then the turn hangs
	reportWrongToken                   // a forged token, then a clean exit
	reportNone                         // no report, clean exit
	reportErrorExit                    // right token, then exit code 1
	hangNoReport                       // no report, the turn hangs
)

// targetPlan scripts a target's start.
type targetPlan int

const (
	targetReady     targetPlan = iota // ready at once
	targetReject                      // readiness rejected
	targetExitClean                   // the first turn ends cleanly before readiness
	targetExitError                   // exits with an error before readiness
	targetHold                        // readiness held until the harness decides
	targetStartErr                    // spawn error
)

// attemptPlan is the script of one attempt in one workspace.
type attemptPlan struct {
	report     reportPlan
	target     targetPlan
	reportText string
}

func drawPlan(t *rapid.T, ws baton.WorkspaceID, n int) attemptPlan {
	return attemptPlan{
		report:     reportPlan(rapid.IntRange(0, int(hangNoReport)).Draw(t, "reportPlan")),
		target:     targetPlan(rapid.IntRange(0, int(targetStartErr)).Draw(t, "targetPlan")),
		reportText: reportText(ws, n),
	}
}

// scriptFor is the engine's script chooser: report-only turns and targets
// follow the workspace's plan; ordinary starts are ready at once.
func (h *harness) scriptFor(req engine.StartRequest) (enginetest.Script, bool) {
	h.mu.Lock()
	p := h.plan[req.Workspace]
	h.mu.Unlock()
	if req.Turn == engine.ReportOnly {
		s := enginetest.Script{Report: p.reportText, ReportToken: enginetest.RightToken}
		switch p.report {
		case reportHang:
			s.Hang = true
		case reportWrongToken:
			s.ReportToken = enginetest.WrongToken
		case reportNone:
			s.ReportToken = enginetest.NoReport
		case reportErrorExit:
			s.ExitCode = 1
		case hangNoReport:
			s.ReportToken, s.Hang = enginetest.NoReport, true
		}
		return s, true
	}
	if req.Attempt == 0 {
		return enginetest.Script{}, true
	}
	switch p.target {
	case targetReject:
		return enginetest.Script{Ready: enginetest.ReadyReject}, true
	case targetExitClean:
		return enginetest.Script{Ready: enginetest.ExitBeforeReady}, true
	case targetExitError:
		return enginetest.Script{Ready: enginetest.ExitBeforeReady, ExitCode: 2}, true
	case targetHold:
		return enginetest.Script{Ready: enginetest.ReadyHold}, true
	case targetStartErr:
		return enginetest.Script{StartErr: baton.Errorf(baton.ErrUnavailable, "spawn failed")}, true
	}
	return enginetest.Script{}, true
}

func (h *harness) setPlan(ws baton.WorkspaceID, p attemptPlan) {
	h.mu.Lock()
	h.plan[ws] = p
	h.mu.Unlock()
}

func (h *harness) planOf(ws baton.WorkspaceID) attemptPlan {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.plan[ws]
}

// model is the reference model of one handoff.
type model struct {
	id              baton.HandoffID
	ws              baton.WorkspaceID
	req             handoff.Request
	state           store.HandoffState
	attempt         int
	summary         bool
	report          string
	stopUnconfirmed bool
	source          baton.SessionID
	sourceConfig    baton.EngineConfig
	// frozen is the row as it became terminal; it must never change.
	frozen *handoff.Handoff
	// launchesAtEnd counts the engine's launches for this handoff when it
	// was cancelled: no launch may follow.
	launchesAtEnd int
}

func (m *model) pending() bool { return m.state.Pending() }

// settleFromStopping predicts where an attempt that has just entered
// stopping comes to rest.
func (h *harness) settleFromStopping(m *model, stopConfirmed bool) {
	if !stopConfirmed {
		m.state, m.stopUnconfirmed = store.StateFailed, true
		return
	}
	p := h.planOf(m.ws)
	if m.summary && m.report == "" {
		if !h.sourceResumable(m) {
			m.state = store.StateFailed
			return
		}
		switch p.report {
		case reportClean:
			m.report = p.reportText
		case reportHang:
			m.report, m.state = p.reportText, store.StateGenerating
			return
		case hangNoReport:
			m.state = store.StateGenerating
			return
		case reportErrorExit:
			m.report, m.state = p.reportText, store.StateFailed
			return
		default:
			m.state = store.StateFailed
			return
		}
	}
	h.settleFromStarting(m)
}

func (h *harness) settleFromStarting(m *model) {
	switch h.planOf(m.ws).target {
	case targetReady, targetExitClean:
		m.state = store.StateCompleted
	case targetHold:
		m.state = store.StateStarting
	default:
		m.state = store.StateFailed
	}
}

func (h *harness) sourceResumable(m *model) bool {
	if m.source == "" {
		return false
	}
	s, err := h.session(m.source)
	return err == nil && s.NativeID != "" && s.Config.Engine == m.sourceConfig.Engine
}

func (h *harness) session(id baton.SessionID) (s store.Session, err error) {
	err = h.st.View(h.ctx, func(tx store.Tx) error { s, err = tx.GetSession(id); return err })
	return s, err
}

// await waits until every modelled handoff is at rest where the model says:
// the stored state matches, and a held target or hanging report turn has
// actually been launched (and its timeout armed).
func (h *harness) await() {
	h.t.Helper()
	deadline := time.Now().Add(h.cfg.Wait)
	for {
		why := h.atRest()
		if why == "" {
			h.afterRest()
			return
		}
		if time.Now().After(deadline) {
			h.fatalf("not at rest after %v: %s", h.cfg.Wait, why)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func (h *harness) atRest() string {
	generating := 0
	for _, id := range h.order {
		m := h.hs[id]
		got, err := h.load(id)
		if err != nil {
			return err.Error()
		}
		if got.State != m.state {
			if settled(got.State) {
				// Nothing moves a settled handoff on its own: fail now
				// rather than wait.
				h.fatalf("handoff %s (%s, attempt %d): state %s, model %s (error %q)", id, m.ws, got.Attempt, got.State, m.state, got.Error)
			}
			return fmt.Sprintf("handoff %s (%s, attempt %d): state %s, model %s (error %q)", id, m.ws, got.Attempt, got.State, m.state, got.Error)
		}
		switch m.state {
		case store.StateGenerating:
			generating++
			if h.reportLaunch(m) == nil {
				return fmt.Sprintf("handoff %s: report-only turn not launched yet", id)
			}
			if m.report != "" && got.Report == "" {
				return fmt.Sprintf("handoff %s: report not submitted yet", id)
			}
		case store.StateStarting:
			if h.targetLaunch(m, got.TargetSession) == nil {
				return fmt.Sprintf("handoff %s: target not launched yet", id)
			}
		}
	}
	if n := h.clk.PendingBy(h.clk.Now().Add(genTimeout)); n < generating {
		return fmt.Sprintf("%d generation timers armed, want %d", n, generating)
	}
	return h.launchesClosed()
}

// launchesClosed reports a launch whose record is still live although its
// process has ended (its end is being recorded): not at rest yet.
func (h *harness) launchesClosed() string {
	var live []store.Launch
	if err := h.st.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(""); return err }); err != nil {
		return err.Error()
	}
	running := map[baton.LaunchID]bool{}
	for _, l := range h.eng.Launches() {
		if l.Proc != nil && l.Proc.Running() {
			running[l.Req.LaunchID] = true
		}
	}
	for _, l := range live {
		if !running[l.ID] {
			return fmt.Sprintf("launch %s of session %s: record live, process gone", l.ID, l.Session)
		}
	}
	return ""
}

// afterRest records what only becomes known once at rest: frozen terminal
// rows, and the wakeups a completion moved.
func (h *harness) afterRest() {
	for _, id := range h.order {
		m := h.hs[id]
		if !m.state.Terminal() || m.frozen != nil {
			continue
		}
		got, err := h.co.Get(h.ctx, m.ws, id)
		if err != nil {
			h.fatalf("get %s: %v", id, err)
		}
		m.frozen = &got
		m.launchesAtEnd = h.launchesOf(m)
		if m.state == store.StateCompleted {
			for wid, w := range h.wakeups {
				if w.Session != "" && w.Session == m.source && w.Status == store.WakeupPending {
					w.Session = got.TargetSession
					h.wakeups[wid] = w
				}
			}
		}
	}
}

// settled states change only when a caller acts.
func settled(s store.HandoffState) bool {
	return s == store.StateCompleted || s == store.StateCancelled || s == store.StateFailed || s == store.StateInterrupted
}

func (h *harness) load(id baton.HandoffID) (hf store.Handoff, err error) {
	err = h.st.View(h.ctx, func(tx store.Tx) error { hf, err = tx.GetHandoff(id); return err })
	return hf, err
}

// reportLaunch returns the report-only launch of m's current attempt.
func (h *harness) reportLaunch(m *model) *enginetest.Launch {
	for _, l := range h.eng.Launches() {
		if r := l.Req.Report; r != nil && r.Handoff == m.id && r.Attempt == m.attempt && !l.Failed {
			return &l
		}
	}
	return nil
}

// targetLaunch returns the launch of target session id.
func (h *harness) targetLaunch(m *model, id baton.SessionID) *enginetest.Launch {
	for _, l := range h.eng.Launches() {
		if l.Req.Session == id && l.Req.Turn == engine.Normal && l.Req.Attempt == m.attempt {
			return &l
		}
	}
	return nil
}

// launchesOf counts the engine launches that belong to handoff m.
func (h *harness) launchesOf(m *model) int {
	n := 0
	targets := map[baton.SessionID]bool{}
	_ = h.st.View(h.ctx, func(tx store.Tx) error {
		hf, err := tx.GetHandoff(m.id)
		if err != nil {
			return err
		}
		for _, a := range hf.History {
			targets[a.TargetSession] = true
		}
		targets[hf.TargetSession] = true
		return nil
	})
	for _, l := range h.eng.Launches() {
		if (l.Req.Report != nil && l.Req.Report.Handoff == m.id) || (l.Req.Attempt > 0 && targets[l.Req.Session]) {
			n++
		}
	}
	return n
}

// runningProc returns the scripted process running in ws, if any.
func (h *harness) runningProc(ws baton.WorkspaceID) *enginetest.Process {
	ls := h.eng.Launches()
	for i := len(ls) - 1; i >= 0; i-- {
		if p := ls[i].Proc; p != nil && ls[i].Req.Workspace == ws && p.Running() {
			return p
		}
	}
	return nil
}

// scriptStop sets how the process running in ws answers its next Stop and
// reports whether that stop will be confirmed (true when nothing runs).
func (h *harness) scriptStop(ws baton.WorkspaceID, label string) bool {
	p := h.runningProc(ws)
	if p == nil {
		return true
	}
	out := rapid.SampledFrom([]engine.StopOutcome{engine.Stopped, engine.Stopped, engine.Timeout, engine.Failed}).Draw(h.t, label)
	p.SetStopOutcome(out)
	return out.Confirmed()
}

// pendingIn returns ws's pending model, if any.
func (h *harness) pendingIn(ws baton.WorkspaceID) *model {
	for _, id := range h.order {
		if m := h.hs[id]; m.ws == ws && m.pending() {
			return m
		}
	}
	return nil
}

func expectErr(h *harness, what string, err, want error) {
	h.t.Helper()
	if !errors.Is(err, want) {
		h.fatalf("%s: error %v, want %v", what, err, want)
	}
}
