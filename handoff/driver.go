package handoff

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/safefile"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// A driver performs the engine side effects of one attempt, after the
// transactions that permit them have committed, and feeds the outcomes back
// as triggers tagged with the attempt. It ends when the attempt leaves the
// active states, when a Stop is requested, or on Shutdown.
type driver struct {
	attempt int
	cancel  context.CancelFunc
}

func (c *Coordinator) startDriver(h store.Handoff, owner workspace.Owner) {
	if !isActive(h.State) || h.StopRequested {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if d, ok := c.drivers[h.ID]; ok {
		if d.attempt == h.Attempt {
			return
		}
		d.cancel()
	}
	ctx, cancel := context.WithCancel(c.root)
	d := &driver{attempt: h.Attempt, cancel: cancel}
	c.drivers[h.ID] = d
	c.wg.Add(1)
	go c.drive(ctx, d, h, owner)
}

// drive runs the steps of attempt h.Attempt, starting from h, the row the
// transaction that started it committed. Each step starts from the row
// the previous step's transition committed, without reading it again: a
// change made since by another transaction is either a Stop, which
// cancels ctx (in this process) or is refused by the launch's precheck
// and by the next transition's check (engineCheck), both inside
// transactions, or a transition of this attempt, which only this driver
// fires. Only a step that committed nothing starts again from a read.
func (c *Coordinator) drive(ctx context.Context, d *driver, h store.Handoff, owner workspace.Owner) {
	id, attempt := h.ID, h.Attempt
	defer func() {
		d.cancel()
		c.mu.Lock()
		if c.drivers[id] == d {
			delete(c.drivers, id)
		}
		c.mu.Unlock()
		c.wg.Done()
	}()
	var (
		gen    baton.Token    // the report-only turn's token, once armed
		launch baton.LaunchID // the launch recorded for the current state
	)
	fresh := true // h is the row last committed
	for ctx.Err() == nil {
		if !fresh {
			var err error
			if h, err = c.load(ctx, id); err != nil {
				return
			}
		}
		fresh = false
		if h.Attempt != attempt || h.StopRequested || !isActive(h.State) {
			return
		}
		var (
			f   *fire
			err error
		)
		switch h.State {
		case store.StateStopping:
			f, err = c.stepStop(ctx, h)
		case store.StateGenerating:
			f, err = c.stepGenerate(ctx, h, owner, gen, launch)
		case store.StateStarting:
			f, err = c.stepStart(ctx, h, owner, launch)
		}
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, errStaleAttempt) && !errors.Is(err, session.ErrLaunchRefused) && !errors.Is(err, workspace.ErrStaleEpoch) {
				c.log.Error("handoff driver stopped", zap.String("handoff", string(id)), zap.Int("attempt", attempt), zap.Error(err))
			}
			return
		}
		if f != nil {
			if !f.genToken.IsZero() {
				gen = f.genToken
			}
			launch = f.launch
			h, fresh = f.row, true
		}
	}
}

// fenced reports whether a launch was refused because another process took
// the reservation since this one did (its epoch is stale), and logs it: the
// transfer is no longer this process's to fail or to stop.
func (c *Coordinator) fenced(h store.Handoff, err error) bool {
	if !errors.Is(err, workspace.ErrStaleEpoch) {
		return false
	}
	c.log.Warn("launch refused: another process took the reservation (stale epoch)",
		zap.String("handoff", string(h.ID)), zap.Int("attempt", h.Attempt), zap.Error(err))
	return true
}

// stillAt refuses a launch once the attempt has left state st or a Stop was
// requested: it runs under the workspace's launch lock.
func stillAt(id baton.HandoffID, attempt int, st store.HandoffState) func(store.Tx) error {
	return func(tx store.Tx) error {
		h, err := tx.GetHandoff(id)
		if err != nil {
			return err
		}
		if h.Attempt != attempt || h.State != st || h.StopRequested {
			return errStaleAttempt
		}
		return nil
	}
}

func (c *Coordinator) stepStop(ctx context.Context, h store.Handoff) (*fire, error) {
	// The source's end is recorded in the transition's commit (or alone,
	// when the transition is refused or never fires).
	out, end, err := c.sessions.HaltDeferred(ctx, h.Workspace)
	defer end.Finish(false)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	out, err = c.reapStrays(ctx, h.Workspace, out, err)
	in := input{trigger: triggerSourceStopped, end: end, errMsg: "the source session cannot be resumed to write a report; skip to continue without a summary"}
	if !out.Confirmed() {
		in = input{trigger: triggerSourceStopUnconfirmed, errMsg: fmt.Sprintf("the source's stop was not confirmed (%s%s)", out, errSuffix(err))}
	} else if !h.GenerateSummary || h.Report != "" {
		// The transfer goes straight to its target: the facts ride in the
		// same commit.
		in.facts = c.gatherFacts(ctx, h)
	}
	return c.event(ctx, h, in)
}

func (c *Coordinator) stepGenerate(ctx context.Context, h store.Handoff, owner workspace.Owner, gen baton.Token, launch baton.LaunchID) (*fire, error) {
	ended := func(exit engine.ExitStatus, msg string, end *workspace.End) (*fire, error) {
		in := input{trigger: triggerGenerationEnded, exit: exit, errMsg: msg, end: end}
		if exit.Clean() {
			in.facts = c.gatherFacts(ctx, h)
		}
		return c.event(ctx, h, in)
	}
	if gen.IsZero() {
		return ended(engine.ExitStatus{Err: errors.New("generation token lost")}, "the report-only turn was armed by another process", nil)
	}
	var (
		src store.Session
		ws  store.Workspace
	)
	err := c.store.View(ctx, func(tx store.Tx) (err error) {
		if src, err = tx.GetSession(h.SourceSession); err != nil {
			return err
		}
		ws, err = tx.GetWorkspace(h.Workspace)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Never leave the transfer generating with no turn and no timer.
		return ended(engine.ExitStatus{Err: err}, "the source session could not be read: "+err.Error(), nil)
	}
	p, err := c.sessions.Launch(ctx, workspace.LaunchRequest{
		StartRequest: engine.StartRequest{
			Workspace: h.Workspace, Session: src.ID, Config: h.SourceConfig, Mode: engine.Resume,
			NativeID: src.NativeID, Turn: transcript.ReportOnly, Prompt: reportPrompt, Owner: owner.Token, Dir: ws.Root,
			Report:  &engine.ReportCredentials{Workspace: h.Workspace, Handoff: h.ID, Attempt: h.Attempt, Token: gen},
			Attempt: h.Attempt, LaunchID: launch, ReadyTimeout: c.readyTime,
		},
		Epoch: owner.Epoch, Precheck: stillAt(h.ID, h.Attempt, store.StateGenerating),
		// The turn's exit is recorded with GenerationEnded.
		KeepRecord: true,
	})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, session.ErrLaunchRefused) || c.fenced(h, err) {
			return nil, err
		}
		return ended(engine.ExitStatus{Err: err}, "the report-only turn did not start: "+err.Error(), nil)
	}
	timer := clock.NewTimerAt(c.clock, h.GenerationDeadline)
	defer timer.Stop()
	select {
	case <-p.Done():
		exit := p.Exit()
		msg := "the report-only turn ended without a report"
		if !exit.Clean() {
			msg = "the report-only turn failed: " + describeExit(exit)
		}
		return ended(exit, msg, c.sessions.ExitEnd(launch, exit))
	case <-timer.C():
		out, end, err := c.sessions.HaltDeferred(ctx, h.Workspace)
		defer end.Finish(false)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := "report generation timed out"
		if !out.Confirmed() {
			msg += fmt.Sprintf("; its stop was not confirmed (%s%s)", out, errSuffix(err))
		}
		in := input{trigger: triggerGenerationTimedOut, confirmed: out.Confirmed(), errMsg: msg, end: end}
		if out.Confirmed() {
			in.facts = c.gatherFacts(ctx, h)
		}
		return c.event(ctx, h, in)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Coordinator) stepStart(ctx context.Context, h store.Handoff, owner workspace.Owner, launch baton.LaunchID) (*fire, error) {
	failed := func(msg string) (*fire, error) {
		out, herr := c.sessions.Halt(ctx, h.Workspace)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !out.Confirmed() {
			msg += fmt.Sprintf("; the target's stop was not confirmed (%s%s)", out, errSuffix(herr))
		}
		return c.event(ctx, h, input{trigger: triggerTargetFailed, confirmed: out.Confirmed(), errMsg: msg})
	}
	// One read gives the briefing its records and the launch its
	// workspace.
	in, err := c.briefingInput(ctx, h)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return failed("the workspace could not be read: " + err.Error())
	}
	ws := in.Workspace
	prompt, err := c.brief.Build(ctx, in)
	if err != nil {
		return failed("building the handoff prompt failed: " + err.Error())
	}
	if err := publish(ws.Root, h.ReportPath, prompt); err != nil {
		return failed("publishing the handoff document failed: " + err.Error())
	}
	target := h.TargetSession
	req := engine.StartRequest{
		Workspace: h.Workspace, Session: target, Config: h.TargetConfig, Mode: engine.Fresh,
		Turn: transcript.Normal, Prompt: prompt, Owner: owner.Token, Attempt: h.Attempt, Dir: ws.Root,
		LaunchID: launch, ReadyTimeout: c.readyTime,
	}
	if h.Native {
		// The native path: the source's own conversation, resumed under
		// the target configuration (its row carries the native id).
		var t store.Session
		err := c.store.View(ctx, func(tx store.Tx) (err error) { t, err = tx.GetSession(target); return err })
		if err != nil {
			return failed("the target session could not be read: " + err.Error())
		}
		req.Mode, req.NativeID = engine.Resume, t.NativeID
	}
	p, err := c.sessions.Launch(ctx, workspace.LaunchRequest{
		StartRequest: req,
		Epoch:        owner.Epoch, Precheck: stillAt(h.ID, h.Attempt, store.StateStarting),
		OnExit: func(st engine.ExitStatus) { c.sessions.RecordEnd(target, launch, st) },
	})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, session.ErrLaunchRefused) || c.fenced(h, err) {
			return nil, err
		}
		return failed("the target did not start: " + err.Error())
	}
	// The readiness timeout counts from the commit that entered starting,
	// not from whenever this goroutine got here: a slow launch or a busy
	// scheduler must not stretch it.
	rctx, cancel := clock.WithDeadline(ctx, c.clock, h.UpdatedAt.Add(c.readyTime))
	native, err := p.Ready(rctx)
	timedOut := context.Cause(rctx) == context.DeadlineExceeded
	cancel()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil && timedOut {
		return failed(fmt.Sprintf("the target did not confirm readiness within %s", c.readyTime))
	}
	if err == nil {
		return c.event(ctx, h, input{trigger: triggerTargetReady, nativeID: native, actual: p.Actual()})
	}
	if errors.Is(err, engine.ErrExitedBeforeReady) {
		select {
		case <-p.Done():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// A first turn that ended on its own before readiness completes the
		// transfer; a target stopped before it was ready (by a stop not of
		// this driver's making) did not finish its first turn.
		if exit := p.Exit(); exit.Clean() && !exit.Stopped {
			return c.event(ctx, h, input{trigger: triggerTargetExited, exit: exit, actual: p.Actual(), exitLaunch: launch})
		}
		return failed("the target exited before it was ready: " + describeExit(p.Exit()))
	}
	return failed("the target was not ready: " + err.Error())
}

// publish writes the attempt's prompt document, when the workspace has a
// root: created exclusively, mode 0600, never through a symlink, never
// outside the root, beside a .gitignore that ignores everything.
func publish(root, path, prompt string) error {
	if root == "" || path == "" {
		return nil
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return err
	}
	if err := safefile.EnsureFile(root, handoffDir+"/.gitignore", []byte("*\n")); err != nil {
		return err
	}
	return safefile.Write(root, filepath.ToSlash(rel), []byte(prompt))
}

func describeExit(e engine.ExitStatus) string {
	switch {
	case e.Stopped && e.Err == nil && e.Code == 0:
		return "it was stopped"
	case e.Err != nil:
		return e.Err.Error()
	case e.Code != 0:
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return "clean exit"
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// reapStrays completes a confirmed stop of what this process runs in the
// workspace by reaping the launches other processes left live there (a
// source started through another process on this machine, an orphan of a
// crashed one): the stop is confirmed only once every launch of the
// workspace is confirmed gone.
func (c *Coordinator) reapStrays(ctx context.Context, ws baton.WorkspaceID, out engine.StopOutcome, err error) (engine.StopOutcome, error) {
	if !out.Confirmed() {
		return out, err
	}
	res, rerr := c.sessions.Reap(ctx, ws, nil)
	switch {
	case rerr != nil:
		return engine.Failed, rerr
	case len(res.Unconfirmed) > 0:
		return engine.Timeout, mayStillRun(res.Unconfirmed[0].Launch)
	}
	return out, err
}

// mayStillRun says that launch l was not confirmed gone.
func mayStillRun(l store.Launch) error {
	return fmt.Errorf("launch %s of session %s by %s on %s may still run", l.ID, l.Session, l.Holder, l.Host)
}

// follow follows the workspace of a transfer whose reservation this
// process took, for as long as it holds it (driving it, or keeping it for a
// decision), and carries out at once each stop another process requests of
// it (it learns of it through the store's Notifier; without one, the lease
// renewal finds it every third of the lease TTL). It costs one read per
// commit of that workspace, none for other workspaces.
func (c *Coordinator) follow(ctx context.Context, id baton.HandoffID, ws baton.WorkspaceID) {
	defer c.wg.Done()
	n, ok := c.store.(store.Notifier)
	if !ok {
		return
	}
	ch, cancel := n.Subscribe(ws)
	defer cancel()
	// The first look comes right after subscribing, without waiting for a
	// notification: a stop requested between the take's commit and the
	// subscription notified nobody.
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
		}
		h, err := c.load(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err == nil && h.State.Terminal():
			// Settled, perhaps by another process: nothing left to follow.
			c.mu.Lock()
			c.untake(id)
			c.mu.Unlock()
			return
		case err != nil:
			continue
		}
		c.serveRequested(ctx, h)
	}
}
