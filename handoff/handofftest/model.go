package handofftest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
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
	targetReady         targetPlan = iota // ready at once
	targetReject                          // readiness rejected
	targetExitClean                       // the first turn ends cleanly before readiness
	targetExitError                       // exits with an error before readiness
	targetHold                            // readiness held until the harness decides
	targetStartErr                        // spawn error
	targetEndAfterReady                   // ready, and the first turn ends right after
	targetDelayed                         // ready once the clock passes readyDelay
)

const readyDelay = 10 * time.Second

// attemptPlan is the script of one attempt in one workspace.
type attemptPlan struct {
	report     reportPlan
	target     targetPlan
	reportText string
	// reportNode is the node the report-only turn submits its report to.
	reportNode int
	// interpose is the request that lands between a commit of the attempt
	// and its effect (see interposeKind); targetStop is how its target
	// answers a stop (a target that runs until stopped).
	interpose  interposeKind
	targetStop engine.StopOutcome
}

func drawPlan(t *rapid.T, ws baton.WorkspaceID, n, nodes int) attemptPlan {
	p := attemptPlan{
		report:     reportPlan(rapid.IntRange(0, int(hangNoReport)).Draw(t, "reportPlan")),
		target:     targetPlan(rapid.IntRange(0, int(targetDelayed)).Draw(t, "targetPlan")),
		reportText: reportText(ws, n),
		reportNode: rapid.IntRange(0, nodes-1).Draw(t, "reportNode"),
	}
	// One attempt in three has a request land between a commit and its
	// effect.
	if k := rapid.IntRange(0, 3*int(interposeCrashBeforeSpawn)-1).Draw(t, "interpose"); k < int(interposeCrashBeforeSpawn) {
		p.interpose = interposeKind(k + 1)
	}
	if p.interpose == interposeFreezeAcrossArming {
		// The freeze matters where a readiness timeout stays armed at
		// rest: a target that holds its readiness, or is ready late.
		p.target = rapid.SampledFrom([]targetPlan{targetHold, targetDelayed}).Draw(t, "frozenTarget")
	}
	if p.interpose == interposeStopBeforeSpawn && (p.target == targetReady || p.target == targetHold || p.target == targetDelayed) {
		p.targetStop = rapid.SampledFrom([]engine.StopOutcome{engine.Stopped, engine.Stopped, engine.Timeout, engine.Failed}).Draw(t, "targetStop")
	}
	return p
}

// scriptFor is the engine's script chooser: report-only turns and targets
// follow the workspace's plan; ordinary starts are ready at once.
func (h *harness) scriptFor(req engine.StartRequest) (enginetest.Script, bool) {
	h.mu.Lock()
	p := h.plan[req.Workspace]
	h.mu.Unlock()
	if req.Turn == transcript.ReportOnly {
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
		return enginetest.Script{Usage: h.ordinaryUsage(req.Workspace)}, true
	}
	s, ok := h.targetScript(p)
	s.StopOutcome = p.targetStop
	return s, ok
}

// targetScript is the script of a target's start under plan p.
func (h *harness) targetScript(p attemptPlan) (enginetest.Script, bool) {
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
	case targetEndAfterReady:
		return enginetest.Script{EndAfterReady: true}, true
	case targetDelayed:
		return enginetest.Script{ReadyDelay: readyDelay}, true
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
	// genDeadline is when a generating attempt times out; readyAt is when a
	// delayed target becomes ready; readyBy is when a starting target that
	// is not ready times out.
	genDeadline, readyAt, readyBy time.Time
	// uncertain marks a handoff whose next resting state the model cannot
	// tell (its driving node was frozen or crashed and another node took
	// over, or the node came back): the harness waits for it to rest, checks
	// the state is one it may be in, and adopts it.
	uncertain bool
	// takenBy and takenLife name the node (and its life) that last took the
	// reservation: a Coordinator's own Reconcile leaves those alone.
	takenBy   *node
	takenLife int
	// frozen is the row as it became terminal; it must never change.
	frozen *store.Handoff
	// launchesAtEnd counts the engine's launches for this handoff when it
	// became terminal: no launch may follow.
	launchesAtEnd int
	// stopRequested marks a Stop recorded that the driving node never
	// carried out (it crashed first): the next Reconcile meets it.
	stopRequested bool
	// armFrom is the commit into starting of an attempt whose driving node
	// froze right after it (interposeFreezeAcrossArming): its readiness
	// timeout counts from then, whenever the node thaws.
	armFrom time.Time
	// unspawned marks an attempt starting whose target its driving node
	// never launched (it froze or crashed first).
	unspawned bool
	// pressure is the settle that made a context-pressure transfer, nil
	// for one a caller asked for.
	pressure *pressureSettle
	// history is how each attempt ended, as the model saw it settle: one
	// entry per settled state entered (a re-entry of the same attempt and
	// outcome replaces its entry).
	history []outcome
}

// outcome is one entry of a handoff's history: an attempt and the settled
// state it ended in.
type outcome struct {
	attempt int
	state   store.HandoffState
}

// noteSettled records in m's history the settled state the model puts it
// in, unless it is the latest entry already.
func (m *model) noteSettled() {
	if !settled(m.state) {
		return
	}
	o := outcome{m.attempt, m.state}
	if n := len(m.history); n > 0 && m.history[n-1] == o {
		return
	}
	m.history = append(m.history, o)
}

// outcomesOf is a stored history in the model's terms.
func outcomesOf(recs []store.AttemptRecord) []outcome {
	out := []outcome{}
	for _, r := range recs {
		out = append(out, outcome{r.Attempt, r.Outcome})
	}
	return out
}

func (m *model) pending() bool { return m.state.Pending() }

// settleFromStopping predicts where an attempt that has just entered
// stopping comes to rest.
func (h *harness) settleFromStopping(m *model, stopConfirmed bool) {
	m.unspawned, m.armFrom = false, zeroTime // a new attempt
	if !stopConfirmed {
		m.state, m.stopUnconfirmed = store.StateFailed, true
		return
	}
	m.stopUnconfirmed = false
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
			m.report, m.state, m.genDeadline = p.reportText, store.StateGenerating, h.clk.Now().Add(genTimeout)
			return
		case hangNoReport:
			m.state, m.genDeadline = store.StateGenerating, h.clk.Now().Add(genTimeout)
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
	case targetReady, targetExitClean, targetEndAfterReady:
		m.state = store.StateCompleted
	case targetHold:
		m.state, m.readyBy = store.StateStarting, h.clk.Now().Add(readyTimeout)
	case targetDelayed:
		m.state, m.readyAt, m.readyBy = store.StateStarting, h.clk.Now().Add(readyDelay), h.clk.Now().Add(readyTimeout)
	default:
		m.state = store.StateFailed
	}
}

// sourceResumable is the model's own reading of "the source can resume
// for a report": it has a native id, on the engine of its configuration.
func (h *harness) sourceResumable(m *model) bool {
	if m.source == "" {
		return false
	}
	s, err := h.session(m.source)
	return err == nil && s.NativeID != "" && s.Config.Engine == m.sourceConfig.Engine
}

func (h *harness) session(id baton.SessionID) (s store.Session, err error) {
	err = h.raw.View(h.ctx, func(tx store.Tx) error { s, err = tx.GetSession(id); return err })
	return s, err
}

func (h *harness) load(id baton.HandoffID) (hf store.Handoff, err error) {
	err = h.raw.View(h.ctx, func(tx store.Tx) error { hf, err = tx.GetHandoff(id); return err })
	return hf, err
}

func (h *harness) reservation(ws baton.WorkspaceID) (r store.Reservation) {
	_ = h.raw.View(h.ctx, func(tx store.Tx) error {
		var err error
		if r, err = tx.GetReservation(ws); errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	return r
}

// await waits until every modelled handoff is at rest where the model says:
// the stored state matches, and a held target or hanging report turn has
// actually been launched (and its timeout armed). Then it checks every
// invariant.
func (h *harness) await() {
	h.t.Helper()
	deadline := time.Now().Add(h.cfg.Wait)
	for {
		if pk := h.takeParked(); pk != nil {
			h.interpose(pk)
			deadline = time.Now().Add(h.cfg.Wait)
			continue
		}
		why := h.atRest()
		if why == "" {
			h.afterRest()
			h.check()
			for len(h.afterRestHooks) > 0 {
				fn := h.afterRestHooks[0]
				h.afterRestHooks = h.afterRestHooks[1:]
				fn()
			}
			return
		}
		if time.Now().After(deadline) {
			h.fatalf("not at rest after %v: %s", h.cfg.Wait, why)
		}
		time.Sleep(200 * time.Microsecond) // a bounded poll: the engine's goroutines settle
	}
}

func (h *harness) atRest() string {
	timers := 0
	var want []string
	for _, n := range h.nodes {
		st := n.gate.get()
		if st == nodeUp || st == nodeCrashed {
			timers++ // its lease-renewal timer
			want = append(want, n.id+"'s lease renewal")
		}
		if st == nodeUp && !n.clk.renewalArmed() {
			// Its renewal loop has not armed its next renewal yet: a clock
			// move now would find no timer of it to fire.
			return fmt.Sprintf("%s (life %d): next lease renewal not armed yet", n.id, n.life)
		}
	}
	for _, id := range h.order {
		m := h.hs[id]
		got, err := h.load(id)
		if err != nil {
			return err.Error()
		}
		if m.uncertain {
			if why := h.restingUncertain(m, got); why != "" {
				return why
			}
			continue
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
			if h.reportLaunch(m) == nil {
				return fmt.Sprintf("handoff %s: report-only turn not launched yet", id)
			}
			if m.report != "" && got.Report == "" {
				return fmt.Sprintf("handoff %s: report not submitted yet", id)
			}
			if h.drivenByUp(m) {
				timers++
				want = append(want, string(id)+"'s generation timeout")
			}
			if why := h.timeoutArmed(m, m.genDeadline, "generation"); why != "" {
				return why
			}
		case store.StateStarting:
			if h.targetLaunch(m, got.TargetSession) == nil && h.drivenByUp(m) {
				// (A node that froze or crashed before the spawn
				// launches nothing until it thaws.)
				return fmt.Sprintf("handoff %s: target not launched yet", id)
			}
			if m.readyAt.After(h.clk.Now()) && h.drivenByUp(m) {
				timers++
				want = append(want, string(id)+"'s readiness delay")
			}
			if h.drivenByUp(m) {
				timers++
				want = append(want, string(id)+"'s readiness timeout")
			}
			if why := h.timeoutArmed(m, m.readyBy, "readiness"); why != "" {
				return why
			}
		}
	}
	for _, ws := range h.wss {
		for _, p := range h.runningProcs(ws) {
			if p.Script().EndAfterReady && h.launchedBy(p.N()) != nil && h.launchedBy(p.N()).gate.get() == nodeUp {
				return fmt.Sprintf("launch %d: a first turn that ends on its own is still running", p.N())
			}
		}
	}
	if why := h.rowsMatchProcesses(h.read()); why != "" {
		return why
	}
	for _, ws := range h.wss {
		if why := h.deliveryInFlight(ws); why != "" {
			return why
		}
		if why := h.queueAtRest(ws); why != "" {
			return why
		}
	}
	if n := h.clk.PendingBy(h.clk.Now().Add(max(genTimeout, readyTimeout))); n < timers {
		return fmt.Sprintf("%d timers armed, want %d (%s)", n, timers, strings.Join(want, ", "))
	}
	return h.launchesClosed()
}

// launchesClosed reports a launch whose record is still live although its
// process has ended (its end is being recorded): not at rest yet.
func (h *harness) launchesClosed() string {
	var live []store.Launch
	if err := h.raw.View(h.ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches(""); return err }); err != nil {
		return err.Error()
	}
	running := map[baton.LaunchID]bool{}
	byNode := map[baton.LaunchID]*node{} // the node (in its current life) that made each launch
	for _, l := range h.eng.Launches() {
		if l.Proc != nil && l.Proc.Running() {
			running[l.Req.LaunchID] = true
		}
		if l.Req.LaunchID != "" {
			byNode[l.Req.LaunchID] = h.launchedBy(l.N)
		}
	}
	for _, l := range live {
		// Only a node that runs closes its records; a gone or paused
		// node's records stay live until it (or a reaper) settles them.
		if n := byNode[l.ID]; n == nil || n.gate.get() != nodeUp {
			continue
		}
		if !running[l.ID] {
			return fmt.Sprintf("launch %s of session %s: record live, process gone", l.ID, l.Session)
		}
	}
	return ""
}

// restingUncertain says why an uncertain handoff is not at rest yet, or
// adopts where it rests.
func (h *harness) restingUncertain(m *model, got store.Handoff) string {
	switch got.State {
	case store.StateStopping:
		return fmt.Sprintf("handoff %s: still stopping", m.id)
	case store.StateGenerating:
		if h.reportLaunchOf(m.id, got.Attempt) == nil {
			return fmt.Sprintf("handoff %s: report-only turn not launched yet", m.id)
		}
	case store.StateStarting:
		l := h.targetLaunch(&model{attempt: got.Attempt}, got.TargetSession)
		if l == nil {
			if h.drivenByUp(m) {
				return fmt.Sprintf("handoff %s: target not launched yet", m.id)
			}
			break // its driver is down: nothing launches it
		}
		if l.Proc != nil && (l.Proc.ReadyResolved() || !l.Proc.Running()) && h.drivenByUp(m) {
			// Its driver has learnt (or is learning) how readiness went,
			// on a node that runs: it moves on.
			return fmt.Sprintf("handoff %s: target's readiness resolved, still starting", m.id)
		}
		if l.Proc != nil && l.Proc.ReadyDue() && h.drivenByUp(m) {
			// Its readiness resolves without a further clock move, any
			// moment now: not at rest either.
			return fmt.Sprintf("handoff %s: target's readiness about to resolve, still starting", m.id)
		}
	}
	if activeState(got.State) {
		// got was read before the looks above: a transfer that moved on
		// meanwhile (its readiness resolved, its reservation released,
		// so that it no longer looked driven) is not at rest.
		if now, err := h.load(m.id); err != nil || now.State != got.State || now.Attempt != got.Attempt {
			return fmt.Sprintf("handoff %s: moved on from %s while the harness looked", m.id, got.State)
		}
	}
	if m.frozen != nil && got.State != m.frozen.State {
		h.fatalf("invariant 1: terminal handoff %s went from %s to %s", m.id, m.frozen.State, got.State)
	}
	if got.Attempt != m.attempt {
		h.fatalf("model: handoff %s moved from attempt %d to %d on its own", m.id, m.attempt, got.Attempt)
	}
	if got.Report != m.report && m.report != "" && got.Report != "" {
		h.fatalf("invariant 7: handoff %s report changed from %q to %q", m.id, m.report, got.Report)
	}
	m.state, m.report, m.stopUnconfirmed = got.State, got.Report, got.StopUnconfirmed
	m.genDeadline, m.readyAt, m.readyBy = got.GenerationDeadline, time.Time{}, time.Time{}
	m.history = outcomesOf(got.History)
	// A transfer adopted while still active stays uncertain: the model did
	// not see when its timers were armed.
	m.uncertain = activeState(got.State)
	if r := h.reservation(m.ws); r.Epoch != h.epoch[m.ws] {
		// Taken meanwhile: by the node that holds its lease now, in the
		// life it runs (a later Reconcile there leaves it alone).
		h.epoch[m.ws] = r.Epoch
		if n := h.nodeByID(r.LeaseHolder); n != nil && r.Held && r.Handoff == m.id {
			m.takenBy, m.takenLife = n, n.life
		}
		h.log.add(fmt.Sprintf("   model: %s adopted at epoch %d, lease held by %q", m.id, r.Epoch, r.LeaseHolder))
	}
	return ""
}

// timeoutArmed says why m is not at rest while the life that took it, up
// and still holding its lease, has not armed its timeout for at, the
// deadline the model counts from the commit that started it; "" once it
// has, or when the model does not know which life drives m.
func (h *harness) timeoutArmed(m *model, at time.Time, what string) string {
	n := m.takenBy
	if at.IsZero() || !at.After(h.clk.Now()) || n == nil || n.life != m.takenLife || n.gate.get() != nodeUp {
		return ""
	}
	if r := h.reservation(m.ws); !r.Held || r.Handoff != m.id || r.LeaseHolder != n.id {
		return ""
	}
	if !n.clk.armedFor(at) {
		return fmt.Sprintf("handoff %s: %s (life %d) has not armed its %s timeout for %s", m.id, n.id, n.life, what, at.Format("15:04:05"))
	}
	return ""
}

// drivenByUp reports whether the node holding m's lease is up (its timers
// run and its calls pass).
func (h *harness) drivenByUp(m *model) bool {
	r := h.reservation(m.ws)
	for _, n := range h.nodes {
		if n.id == r.LeaseHolder {
			return n.gate.get() == nodeUp
		}
	}
	return false
}

// afterRest records what only becomes known once at rest: frozen terminal
// rows, and the wakeups a completion moved.
func (h *harness) afterRest() {
	for _, id := range h.order {
		m := h.hs[id]
		if !m.uncertain {
			m.noteSettled()
		}
		if !m.state.Terminal() || m.frozen != nil {
			continue
		}
		got, err := h.load(id)
		if err != nil {
			h.fatalf("get %s: %v", id, err)
		}
		pub := viewOf(got)
		m.frozen = &pub
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

// viewOf is the part of a row that must never change once terminal.
func viewOf(h store.Handoff) store.Handoff {
	return store.Handoff{ID: h.ID, Workspace: h.Workspace, RequestID: h.RequestID, State: h.State, Attempt: h.Attempt,
		SourceSession: h.SourceSession, TargetSession: h.TargetSession, Report: h.Report, Error: h.Error}
}

// settled states change only when a caller acts.
func settled(s store.HandoffState) bool {
	return s == store.StateCompleted || s == store.StateCancelled || s == store.StateFailed || s == store.StateInterrupted
}

// reportLaunch returns the report-only launch of m's current attempt.
func (h *harness) reportLaunch(m *model) *enginetest.Launch { return h.reportLaunchOf(m.id, m.attempt) }

func (h *harness) reportLaunchOf(id baton.HandoffID, attempt int) *enginetest.Launch {
	for _, l := range h.eng.Launches() {
		if r := l.Req.Report; r != nil && r.Handoff == id && r.Attempt == attempt && !l.Failed {
			return &l
		}
	}
	return nil
}

// targetLaunch returns the launch of target session id.
func (h *harness) targetLaunch(m *model, id baton.SessionID) *enginetest.Launch {
	for _, l := range h.eng.Launches() {
		if l.Req.Session == id && l.Req.Turn == transcript.Normal && l.Req.Attempt == m.attempt {
			return &l
		}
	}
	return nil
}

// launchesOf counts the engine launches that belong to handoff m.
func (h *harness) launchesOf(m *model) int {
	n := 0
	targets := map[baton.SessionID]bool{}
	_ = h.raw.View(h.ctx, func(tx store.Tx) error {
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
		if (l.Req.Report != nil && l.Req.Report.Handoff == m.id) || (l.Req.Report == nil && l.Req.Attempt > 0 && targets[l.Req.Session]) {
			n++
		}
	}
	return n
}

// runningProcs returns the scripted processes running in ws, newest first.
func (h *harness) runningProcs(ws baton.WorkspaceID) []*enginetest.Process {
	var out []*enginetest.Process
	ls := h.eng.Launches()
	for i := len(ls) - 1; i >= 0; i-- {
		if p := ls[i].Proc; p != nil && ls[i].Req.Workspace == ws && p.Running() {
			out = append(out, p)
		}
	}
	return out
}

// orphaned reports whether a process runs in ws that no running node
// launched (its node crashed, froze or shut down): no node can confirm its
// stop but by reaping it, so the model cannot tell how a stop ends.
func (h *harness) orphaned(ws baton.WorkspaceID) bool {
	for _, p := range h.runningProcs(ws) {
		if n := h.launchedBy(p.N()); n == nil || n.gate.get() != nodeUp {
			return true
		}
	}
	return false
}

// scriptStop sets how the processes running in ws answer their next Stop
// and reports whether that stop will be confirmed (true when nothing runs).
func (h *harness) scriptStop(ws baton.WorkspaceID, label string) bool {
	procs := h.runningProcs(ws)
	if len(procs) == 0 {
		return true
	}
	out := rapid.SampledFrom([]engine.StopOutcome{engine.Stopped, engine.Stopped, engine.Timeout, engine.Failed}).Draw(h.t, label)
	for _, p := range procs {
		p.SetStopOutcome(out)
	}
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

// expectErr fails unless err is the refusal want: the sentinel (errors.Is)
// and its code (baton.ErrorCode), which is what a caller switches on.
func expectErr(h *harness, what string, err, want error) {
	h.t.Helper()
	if !errors.Is(err, want) {
		h.fatalf("%s: error %v, want %v", what, err, want)
	}
	if got, code := baton.ErrorCode(err), baton.ErrorCode(want); got != code {
		h.fatalf("%s: error %v has code %s, want %v's %s", what, err, got, want, code)
	}
}
