package session

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// slot is a workspace's launch lock and its process. Invariant: at most one
// process per workspace. A process keeps its slot until its watcher has
// recorded its end (or Halt has), so no new run of a session starts before
// the previous run's end is on record.
type slot struct {
	mu    sync.Mutex
	cond  *sync.Cond // on mu: signalled when a run's halting count drops
	run   *running
	start sync.Mutex // serializes ordinary Starts: choosing a row and launching
}

type running struct {
	session baton.SessionID
	launch  baton.LaunchID
	proc    engine.Process
	halted  bool          // a Halt confirmed the stop and recorded the end (or left it to end)
	halting int           // Halts under way: the watcher waits for them
	end     *ending       // the end a HaltDeferred left to its caller
	keep    bool          // workspace.LaunchRequest.KeepRecord
	cleared chan struct{} // closed once the slot is free of this run
}

// acquire waits until the slot holds no process, or one whose end is
// settled (halted or exited) and about to be cleared. It returns with
// sl.mu held, or ErrSessionRunning while a live process holds the slot.
func (sl *slot) acquire(ctx context.Context) error {
	sl.mu.Lock()
	for sl.run != nil {
		r := sl.run
		if alive(r.proc) && !r.halted {
			sl.mu.Unlock()
			return baton.Errorf(ErrSessionRunning, "session %s", r.session)
		}
		sl.mu.Unlock()
		select {
		case <-r.cleared:
		case <-ctx.Done():
			return ctx.Err()
		}
		sl.mu.Lock()
	}
	return nil
}

func (s *Service) slot(ws baton.WorkspaceID) *slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl, ok := s.slots[ws]
	if !ok {
		sl = &slot{}
		sl.cond = sync.NewCond(&sl.mu)
		s.slots[ws] = sl
	}
	return sl
}

func alive(p engine.Process) bool {
	select {
	case <-p.Done():
		return false
	default:
		return true
	}
}

// Launch starts an engine process in a workspace: it refuses with
// ErrSessionRunning while another process launched through this Service
// still runs there, with ErrWorkspaceBusy or workspace.ErrStaleEpoch unless the
// request's owner may write, and with ErrLaunchRefused when Precheck fails.
// The check and the engine call happen under one lock per workspace, so a
// Halt that follows a committed stop request either sees the process or
// prevents it. Launch does not wait for readiness and writes no session
// rows: callers record what the launch means. A request without a
// ReadyTimeout gets the Service's (Options.ReadyTimeout).
//
// The fence is checked again once the process exists. An engine that
// supports two-phase starts (engine.StartRequest.Admit) spawns it held and
// lets the agent run only after a transaction committed its admission
// (store.Launch.Admitted) while the owner may still write and the launch's
// record is still open; a reap that closes the record first, or a take of
// the reservation, refuses it (ErrLaunchRefused, workspace.ErrStaleEpoch or
// ErrWorkspaceBusy) and the held process is killed before the agent runs.
// So a process frozen between its fence and the spawn, whose launch
// another process reaped or whose reservation it took meanwhile, never
// runs its agent. With any other engine the check runs after Start and a
// fenced-out process is stopped at once: best effort. On an exclusive
// store (one process holds it: workspace.Incarnation) no other process
// can take the reservation or reap the launch, so neither the admission
// (a commit) nor the check runs.
func (sp *supervisor) Launch(ctx context.Context, req workspace.LaunchRequest) (p engine.Process, err error) {
	s := sp.svc()
	if ctx == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if req.ReadyTimeout <= 0 {
		req.ReadyTimeout = s.readyTime
	}
	// The launch is this Service's from now on, so that a transaction that
	// settles its transfer meanwhile never closes its record as unspawned;
	// every path that spawns nothing closes it (after the slot's lock is
	// released).
	s.own(req.LaunchID)
	spawned := false
	defer func() {
		if err != nil && !spawned {
			s.markGone(req.LaunchID, "not launched: "+err.Error())
		}
	}()
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.wg.Done()
	sl := s.slot(req.Workspace)
	if err := sl.acquire(ctx); err != nil {
		return nil, err
	}
	defer sl.mu.Unlock()
	err = s.store.View(ctx, func(tx store.Tx) error {
		if err := workspace.CheckWritable(tx, req.Workspace, req.Owner, req.Epoch); err != nil {
			return err
		}
		if req.Precheck != nil {
			if err := req.Precheck(tx); err != nil {
				return baton.Errorf(ErrLaunchRefused, "%v", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// A two-phase start: the engine spawns the process held and asks for
	// its admission before the agent runs.
	var admitted atomic.Pointer[error] // the admission's result, once made
	sreq := req.StartRequest
	alone := workspace.Incarnation(s.store) != ""
	if !alone {
		sreq.Admit = func(actx context.Context) error {
			err := s.admit(actx, req)
			admitted.Store(&err)
			return err
		}
	}
	if p, err = s.engine.Start(ctx, sreq); err != nil {
		return nil, err
	}
	var aerr error
	if a := admitted.Load(); a != nil {
		aerr = *a
	} else if !alone {
		// The engine cannot hold a process: check the fence again now
		// that it runs, and stop it at once if it was fenced out
		// meanwhile (best effort: it may have run for that moment).
		aerr = s.recheck(ctx, req)
	}
	r := &running{session: req.Session, launch: req.LaunchID, proc: p, keep: req.KeepRecord, cleared: make(chan struct{})}
	if aerr != nil {
		out, serr := s.stopProc(context.WithoutCancel(ctx), p)
		if out.Confirmed() {
			return nil, aerr
		}
		// It may still run: keep it, so that its end is recorded and its
		// record closed only then.
		s.log.Warn("a launch fenced out after its start was not confirmed stopped", zapLaunch(req.LaunchID), zap.Error(serr))
	}
	sl.run, spawned = r, true
	s.wg.Add(1)
	go s.watch(sl, r, req.OnExit)
	if aerr != nil {
		return nil, aerr
	}
	return p, nil
}

func (s *Service) watch(sl *slot, r *running, onExit func(engine.ExitStatus)) {
	defer s.wg.Done()
	<-r.proc.Done()
	sl.mu.Lock()
	// A Halt under way decides who records the end: wait for it, so that
	// an end is never recorded twice (once here, once by the Halt).
	for r.halting > 0 {
		sl.cond.Wait()
	}
	halted, end := r.halted, r.end
	sl.mu.Unlock()
	switch {
	case end != nil:
		// HaltDeferred's caller records the end in its own transaction:
		// the slot stays taken until it has (or has given up and
		// committed it alone).
		<-end.finished
	case r.keep && !halted:
		// The caller closes the record in the transaction that acts on
		// the exit; until then CloseUnspawned may.
		s.exit(r.launch, endReason(r.proc.Exit()))
	default:
		if onExit != nil && !halted {
			onExit(r.proc.Exit())
		}
		// Whoever recorded the end did not close the launch's record (a
		// report-only turn records no session end): close it now.
		s.markGone(r.launch, endReason(r.proc.Exit()))
	}
	sl.mu.Lock()
	if sl.run == r {
		sl.run = nil
	}
	sl.mu.Unlock()
	close(r.cleared)
}

// Running returns the session whose process runs in the workspace, if any
// process launched through this Service still runs there.
func (s *Service) Running(ws baton.WorkspaceID) (baton.SessionID, bool) {
	sl := s.slot(ws)
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.run == nil || !alive(sl.run.proc) {
		return "", false
	}
	return sl.run.session, true
}

// Halt stops whatever process this Service launched in the workspace and
// returns the confirmed outcome: engine.NotRunning when nothing runs. It
// makes no reservation check: it is the transfer coordinator's tool (and
// Stop's, after the check). A confirmed outcome frees the workspace's slot.
// The end is on record (in a commit of its own) when Halt returns.
func (p *supervisor) Halt(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error) {
	out, _, err := p.svc().halt(ctx, ws, false)
	return out, err
}

// HaltDeferred is Halt without the commit: when the stop is confirmed and a
// process of this Service was there, it returns the End to record, which
// the caller records inside the transaction that acts on the stop
// (End.Record) and then finishes (End.Finish) whatever became of that
// transaction. Until Finish the workspace's slot stays taken (no new
// process starts there through this Service), so Finish must always be
// called. A nil End means there is nothing left to record.
func (p *supervisor) HaltDeferred(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, *workspace.End, error) {
	return p.svc().halt(ctx, ws, true)
}

func (s *Service) halt(ctx context.Context, ws baton.WorkspaceID, deferred bool) (engine.StopOutcome, *workspace.End, error) {
	sl := s.slot(ws)
	sl.mu.Lock()
	r := sl.run
	if r == nil {
		sl.mu.Unlock()
		return engine.NotRunning, nil, nil
	}
	// The watcher waits for this Halt before it records anything.
	r.halting++
	sl.mu.Unlock()
	defer func() {
		sl.mu.Lock()
		r.halting--
		sl.cond.Broadcast()
		sl.mu.Unlock()
	}()
	out, err := engine.NotRunning, error(nil)
	if alive(r.proc) {
		out, err = s.stopProc(ctx, r.proc)
	}
	if !out.Confirmed() {
		return out, nil, err
	}
	reason, usage := "stopped", engine.Usage{}
	if !alive(r.proc) {
		reason, usage = endReason(r.proc.Exit()), r.proc.Exit().Usage
	}
	end := &ending{s: s, session: r.session, launch: r.launch, reason: reason, usage: usage, endSession: true, finished: make(chan struct{})}
	sl.mu.Lock()
	if deferred && r.end == nil && !r.halted {
		r.end, r.halted = end, true
		sl.mu.Unlock()
		return out, workspace.NewEnd(end.Record, end.Finish), err
	}
	sl.mu.Unlock()
	// Record the end now rather than when the watcher gets to it, so that
	// the row says "ended" as soon as Halt returns; the watcher then only
	// frees the slot. (A run whose end another caller was left, or has
	// recorded, gets a committed end here too: two callers cannot both
	// hold its slot.)
	end.Finish(false)
	sl.mu.Lock()
	r.halted = true
	sl.mu.Unlock()
	return out, nil, err
}

// stopProc asks p to stop within the Service's stop timeout. An outcome
// the engine did not confirm in time is engine.Timeout.
func (s *Service) stopProc(ctx context.Context, p engine.Process) (engine.StopOutcome, error) {
	sctx, cancel := clock.WithTimeout(ctx, s.clock, s.stopTime)
	defer cancel()
	out, err := p.Stop(sctx)
	if !out.Confirmed() && sctx.Err() != nil {
		if !alive(p) {
			// It ended while the stop was being given up on.
			return engine.NotRunning, nil
		}
		out = engine.Timeout
		if context.Cause(sctx) == context.DeadlineExceeded {
			err = fmt.Errorf("not confirmed within %s", s.stopTime)
		}
	}
	if out == "" {
		out = engine.Failed
	}
	return out, err
}

func (s *Service) own(id baton.LaunchID) {
	if id == "" {
		return
	}
	s.mu.Lock()
	s.launches[id] = true
	s.mu.Unlock()
}

func (s *Service) disown(id baton.LaunchID) {
	s.mu.Lock()
	delete(s.launches, id)
	delete(s.exited, id)
	s.mu.Unlock()
}

// exit moves a KeepRecord launch whose process ended from the launches
// this Service runs to those whose record its caller has yet to close.
func (s *Service) exit(id baton.LaunchID, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.launches[id] {
		delete(s.launches, id)
		s.exited[id] = reason
	}
}

// takeExit returns why a KeepRecord launch ended, if its process ended
// with its record still open ("" otherwise), and forgets it.
func (s *Service) takeExit(id baton.LaunchID) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.exited[id]
	delete(s.exited, id)
	return r
}

// markGone closes the record of a launch this Service made, once: its
// process is confirmed ended. A launch already closed costs nothing.
func (s *Service) markGone(id baton.LaunchID, reason string) {
	if s.owns(id) {
		s.closeLaunch(id, reason)
	}
}

// An ending is the end of a process launched through a Service, to be
// recorded inside a transaction of the caller's rather than in a commit of
// its own: the launch's record is closed and, for a stopped run, its
// session row is marked ended (and the workspace's current session
// refreshed). HaltDeferred and ExitEnd return one (as a workspace.End). Record it with Record
// inside the transaction that acts on the end, then call Finish once,
// saying whether that transaction committed; Finish commits the end alone
// when it did not.
type ending struct {
	s          *Service
	session    baton.SessionID
	launch     baton.LaunchID
	reason     string
	usage      engine.Usage // what the ended turn reported (workspace.RecordUsage)
	endSession bool
	finished   chan struct{} // closed by Finish; nil when nobody waits
	once       sync.Once
}

// ExitEnd returns the End of a process launched with
// LaunchRequest.KeepRecord that ended with status st: it closes the
// launch's record (it writes no session row).
func (p *supervisor) ExitEnd(launch baton.LaunchID, st engine.ExitStatus) *workspace.End {
	if launch == "" {
		return nil
	}
	e := &ending{s: p.svc(), launch: launch, reason: endReason(st)}
	return workspace.NewEnd(e.Record, e.Finish)
}

// Record writes the end inside tx. It writes nothing that is already on
// record (a launch closed, a row no longer running), so it may run in a
// transaction the store retries.
func (e *ending) Record(tx store.Tx) error {
	if err := workspace.LaunchGone(tx, e.launch, e.reason, e.s.clock.Now()); err != nil {
		return err
	}
	if !e.endSession {
		return nil
	}
	cur, err := tx.GetSession(e.session)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil || cur.Status != store.SessionRunning {
		return err
	}
	now := e.s.clock.Now()
	cur.Status, cur.EndedAt, cur.EndReason = store.SessionEnded, now, e.reason
	workspace.RecordUsage(&cur, e.usage, e.launch)
	return workspace.RecordEnd(tx, cur, now)
}

// Finish settles the end once: recorded says that a transaction holding
// Record committed; otherwise the end is committed now, alone. It then
// frees what waited for it (the workspace's slot, after HaltDeferred).
func (e *ending) Finish(recorded bool) {
	e.once.Do(func() {
		switch {
		case recorded:
			e.s.disown(e.launch)
		case e.endSession:
			e.s.endWith(e.session, e.reason, false, false, e.launch, &engine.ExitStatus{Usage: e.usage, Stopped: true})
		default:
			e.s.closeLaunch(e.launch, e.reason)
		}
		if e.finished != nil {
			close(e.finished)
		}
	})
}

// closeLaunch closes launch id's record in a commit of its own.
func (s *Service) closeLaunch(id baton.LaunchID, reason string) {
	err := s.store.Update(context.Background(), func(tx store.Tx) error { return workspace.LaunchGone(tx, id, reason, s.clock.Now()) })
	if err != nil {
		s.log.Warn("closing a launch record failed", zapLaunch(id), zap.Error(err))
		return
	}
	s.disown(id)
}

// TurnRequest asks for an ordinary turn in a workspace.
type TurnRequest struct {
	Workspace baton.WorkspaceID
	// Prompt is the turn's opening prompt (required).
	Prompt string
	// Session names a session to resume explicitly; an explicit resume
	// re-activates it even if it was rolled back. Empty: resume implicitly
	// when the implicit-resume rule finds a session, else start fresh.
	Session baton.SessionID
	// Fresh forces a new session even when one could be resumed.
	Fresh bool
}

// Start starts or resumes a session and waits (until ctx is done) for the
// engine to confirm readiness; it returns the session as recorded then.
// Errors: baton.ErrInvalid (bad input), ErrNoWorkspace,
// ErrArchived, ErrWorkspaceBusy (reserved),
// ErrSessionRunning, ErrNoSession (explicit session unknown),
// ErrLaunchRefused (another process reaped the launch before the engine
// let it run: see Launch), and the
// engine's errors (engine.ErrSessionMissing, engine.ErrReadyRejected, ...)
// after which the session row is marked ended with the reason. Not safe to
// retry blindly after an engine error: the row shows what happened.
func (s *Service) Start(ctx context.Context, req TurnRequest) (store.Session, error) {
	if ctx == nil {
		return store.Session{}, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	if err := baton.CheckField("prompt", req.Prompt); err != nil {
		return store.Session{}, err
	}
	// One ordinary start at a time per workspace, and none while a process
	// runs there: checked before a row is chosen, so a refused start never
	// touches the row of the session that runs, and a previous run's late
	// end never lands on the next run. A reserved workspace answers busy
	// before anything else (and again in the transaction that records the
	// launch, which is what counts).
	if err := s.AssertWritable(ctx, req.Workspace); err != nil {
		return store.Session{}, err
	}
	p, sess, err := s.launchPicked(ctx, req.Workspace, func(tx store.Tx, ws store.Workspace) (store.Session, string, error) {
		if ws.Archived {
			return store.Session{}, "", ErrArchived
		}
		if err := workspace.CheckWritable(tx, ws.ID, baton.Token{}, 0); err != nil {
			return store.Session{}, "", err
		}
		if err := s.strayLaunch(tx, ws.ID); err != nil {
			return store.Session{}, "", err
		}
		sess, err := s.choose(tx, ws, req)
		return sess, req.Prompt, err
	}, func(sess store.Session, lid baton.LaunchID, err error) {
		// A launch another process reaped before it could run is that
		// process's to settle: this row may be its run by now.
		if !errors.As(err, new(reapedError)) {
			s.endWith(sess.ID, "start failed: "+err.Error(), false, false, lid, nil)
		}
	})
	if err != nil {
		return store.Session{}, err
	}
	return s.awaitReady(ctx, p, sess)
}

// launchPicked launches a turn in workspace ws under its start lock, once
// its slot is free: pick, inside the transaction that records the launch,
// checks the workspace and chooses the session (recorded as running) and
// the prompt; a zero session launches nothing. The turn resumes the session
// when it has a native id, and its end is recorded and the next queued
// instruction delivered when it exits. When the engine refuses the launch,
// failed runs, still under the lock.
func (s *Service) launchPicked(ctx context.Context, ws baton.WorkspaceID, pick func(store.Tx, store.Workspace) (store.Session, string, error),
	failed func(store.Session, baton.LaunchID, error)) (engine.Process, store.Session, error) {
	sl := s.slot(ws)
	sl.start.Lock()
	defer sl.start.Unlock()
	if err := sl.acquire(ctx); err != nil {
		return nil, store.Session{}, err
	}
	sl.mu.Unlock()
	var (
		sess        store.Session
		prompt, dir string
	)
	lid := workspace.NewLaunchID()
	// Owned before its record commits: a reap by this Service meanwhile
	// (Reconcile while a queued instruction is delivered) must not take
	// the record for an earlier process's and end the row it runs.
	s.own(lid)
	err := s.store.Update(ctx, func(tx store.Tx) error {
		w, err := workspace.GetWorkspace(tx, ws)
		if err != nil {
			return err
		}
		if sess, prompt, err = pick(tx, w); err != nil || sess.ID == "" {
			return err
		}
		dir = w.Root
		now := s.clock.Now()
		return workspace.RecordLaunch(tx, store.Launch{ID: lid, Workspace: ws, Session: sess.ID, Holder: s.id, Host: s.host,
			Engine: sess.Config.Engine, CreatedAt: now, UpdatedAt: now})
	})
	if err != nil || sess.ID == "" {
		s.disown(lid)
		return nil, store.Session{}, err
	}
	sreq := engine.StartRequest{
		Workspace: sess.Workspace, Session: sess.ID, Config: sess.Config,
		Mode: engine.Fresh, Turn: transcript.Normal, Prompt: prompt, Dir: dir, LaunchID: lid,
	}
	if sess.NativeID != "" {
		sreq.Mode, sreq.NativeID = engine.Resume, sess.NativeID
	}
	p, err := s.sup().Launch(ctx, workspace.LaunchRequest{StartRequest: sreq, OnExit: func(st engine.ExitStatus) {
		s.endWith(sess.ID, endReason(st), false, false, lid, &st)
		s.afterTurn(sess.Workspace) // the next queued instruction, if any
	}})
	if err != nil {
		failed(sess, lid, err)
		return nil, sess, err
	}
	return p, sess, nil
}

// sessionOf reads session id of workspace ws: ErrNoSession (what says
// which session) when there is none, or it is another workspace's.
func sessionOf(tx store.Tx, ws baton.WorkspaceID, id baton.SessionID, what string) (store.Session, error) {
	s, err := tx.GetSession(id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.Workspace != ws) {
		return store.Session{}, baton.Errorf(workspace.ErrNoSession, "%s%s", what, id)
	}
	return s, err
}

// choose picks the session to run and records it as running and activated.
func (s *Service) choose(tx store.Tx, ws store.Workspace, req TurnRequest) (store.Session, error) {
	now := s.clock.Now()
	var sess store.Session
	var err error
	switch {
	case req.Session != "":
		sess, err = sessionOf(tx, ws.ID, req.Session, "")
	case !req.Fresh:
		sess, _, err = workspace.ImplicitResume(tx, ws, ws.Config) // the zero Session when there is none
	}
	if err != nil {
		return store.Session{}, err
	}
	if sess.ID == "" {
		sess = store.Session{ID: baton.SessionID(ids.New("ses")), Workspace: ws.ID, Config: ws.Config, CreatedAt: now}
	}
	sess.Status, sess.StartedAt, sess.EndedAt, sess.EndReason = store.SessionRunning, now, time.Time{}, ""
	if err := tx.PutSession(sess); err != nil {
		return store.Session{}, err
	}
	return workspace.Activate(tx, sess.ID, now)
}

// awaitReady waits for the launched session's readiness and records it,
// with what the engine reported it really runs (RecordActual).
func (s *Service) awaitReady(ctx context.Context, p engine.Process, sess store.Session) (store.Session, error) {
	native, err := p.Ready(ctx)
	if err != nil {
		// The process may still be alive (ctx ended first); stop it so the
		// workspace is not left with an unrecorded writer.
		_, _ = p.Stop(context.WithoutCancel(ctx))
		// Say why readiness failed even if the exit watcher recorded the
		// process's exit first: the reason briefs a later continuation.
		reason := "not ready: " + err.Error()
		select {
		case <-p.Done():
			if st := p.Exit(); !st.Stopped {
				reason += " (" + endReason(st) + ")"
			}
		default:
		}
		s.endWith(sess.ID, reason, true, false, "", nil)
		return store.Session{}, err
	}
	var out store.Session
	err = s.store.Update(ctx, func(tx store.Tx) error {
		cur, err := tx.GetSession(sess.ID)
		if err != nil {
			return err
		}
		changed := workspace.RecordActual(&cur, p.Actual()) || cur.NativeID != native
		cur.NativeID = native
		out = cur
		if !changed {
			return nil // nothing new: no write, and no change-feed entry
		}
		return tx.PutSession(cur)
	})
	return out, err
}

// endWith records a session's end. With overwrite, an end already recorded
// by the exit watcher gets this more precise reason (a row running again
// is never touched).
// With idle, a row still idle is ended too: a transfer's target runs while
// its row is idle until the completion commits, and an end that wins the
// race against that commit must still be on record (the completion then
// keeps it ended).
// With launch, the launch's record is closed in the same transaction, and
// a row that runs again for a later launch of the session (another node
// relaunched it after reaping this one) is left as it is. With st, the
// end of a turn, the usage it reported is recorded with the end
// (workspace.RecordUsage), and for a turn that ended on its own the
// workspace's context-pressure policy is applied in the same transaction
// (workspace.MarkPressure): once that commits, the hook the transfer
// coordinator set (onPressure) creates the transfer. It returns the session's workspace ("" when the row could not be read).
func (s *Service) endWith(id baton.SessionID, reason string, overwrite, idle bool, launch baton.LaunchID, st *engine.ExitStatus) (ws baton.WorkspaceID) {
	var due, blind bool
	err := s.store.Update(context.Background(), func(tx store.Tx) error {
		due, blind = false, false
		if err := workspace.LaunchGone(tx, launch, reason, s.clock.Now()); err != nil {
			return err
		}
		cur, err := tx.GetSession(id)
		if err != nil {
			return err
		}
		ws = cur.Workspace
		if cur.Status == store.SessionEnded && overwrite {
			cur.EndReason = reason
			return tx.PutSession(cur)
		}
		if cur.Status != store.SessionRunning && (!idle || cur.Status != store.SessionIdle) {
			return nil
		}
		if again, err := workspace.RelaunchedSince(tx, id, launch); err != nil || again {
			return err
		}
		now := s.clock.Now()
		cur.Status, cur.EndedAt, cur.EndReason = store.SessionEnded, now, reason
		if st != nil {
			workspace.RecordUsage(&cur, st.Usage, launch)
			if !st.Stopped && s.pressure() != nil {
				if due, blind, err = workspace.MarkPressure(tx, &cur, launch); err != nil {
					return err
				}
			}
		}
		return workspace.RecordEnd(tx, cur, now)
	})
	if err != nil {
		s.log.Warn("recording session end failed", zapSession(id), zap.Error(err))
		return ws
	}
	if launch != "" {
		s.disown(launch)
	}
	if due {
		s.pressure()(ws, id)
	}
	if blind && s.blind.CompareAndSwap(false, true) {
		s.log.Info("the context-pressure policy cannot fire: the engine reported no context usage, or no window, for a turn",
			zapWorkspace(ws), zapSession(id))
	}
	return ws
}

func endReason(st engine.ExitStatus) string {
	switch {
	case st.Stopped:
		return "stopped"
	case st.Err != nil:
		return "error: " + st.Err.Error()
	case st.Code != 0:
		return fmt.Sprintf("exit code %d", st.Code)
	default:
		return "exited"
	}
}

// Stop stops the process running in the workspace and returns the confirmed
// outcome (engine.NotRunning when nothing runs). Errors: ErrWorkspaceBusy
// while reserved (a pending transfer is
// stopped through its coordinator), ErrNoWorkspace.
func (s *Service) Stop(ctx context.Context, ws baton.WorkspaceID) (engine.StopOutcome, error) {
	if err := s.AssertWritable(ctx, ws); err != nil {
		return "", err
	}
	return s.sup().Halt(ctx, ws)
}

// RecordEnd records that session id's process ended with st, if the row
// still says it runs or is still idle (a transfer's target whose first turn
// ended before its completion committed). Callers that launch through
// Launch with their own session rows (the transfer coordinator) hand it to
// LaunchRequest.OnExit.
//
// launch, when set, is the launch whose process ended: its record is
// closed in the same transaction.
//
// Once the workspace is not reserved, its next queued instruction is
// delivered (see Message).
func (p *supervisor) RecordEnd(id baton.SessionID, launch baton.LaunchID, st engine.ExitStatus) {
	s := p.svc()
	if ws := s.endWith(id, endReason(st), false, true, launch, &st); ws != "" {
		s.afterTurn(ws)
	}
}
