package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
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
// still runs there, with ErrWorkspaceBusy or ErrStaleEpoch unless the
// request's owner may write, and with ErrLaunchRefused when Precheck fails.
// The check and the engine call happen under one lock per workspace, so a
// Halt that follows a committed stop request either sees the process or
// prevents it. Launch does not wait for readiness and writes no session
// rows: callers record what the launch means. A request without a
// ReadyTimeout gets the Service's (WithReadyTimeout).
//
// The fence is checked again once the process exists. An engine that
// supports two-phase starts (engine.StartRequest.Admit) spawns it held and
// lets the agent run only after a transaction committed its admission
// (store.Launch.Admitted) while the owner may still write and the launch's
// record is still open; a reap that closes the record first, or a take of
// the reservation, refuses it (ErrLaunchRefused, ErrStaleEpoch or
// ErrWorkspaceBusy) and the held process is killed before the agent runs.
// So a process frozen between its fence and the spawn, whose launch
// another process reaped or whose reservation it took meanwhile, never
// runs its agent. With any other engine the check runs after Start and a
// fenced-out process is stopped at once: best effort. On an exclusive
// store (one process holds it: workspace.Incarnation) no other process
// can take the reservation or reap the launch, so neither the admission
// (a commit) nor the check runs.
func (sp *supervisor) Launch(ctx context.Context, req workspace.LaunchRequest) (engine.Process, error) {
	s := sp.svc()
	if ctx == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "nil context")
	}
	// The launch is this Service's from now on, so that a transaction that
	// settles its transfer meanwhile never closes its record as unspawned;
	// every path that spawns nothing closes it.
	lid := req.LaunchID
	if req.ReadyTimeout <= 0 {
		req.ReadyTimeout = s.readyTime
	}
	s.own(lid)
	p, err := s.launch(ctx, req)
	if err != nil {
		if p == nil {
			s.markGone(lid, "not launched: "+err.Error())
		}
		return nil, err
	}
	return p, nil
}

func (s *Service) launch(ctx context.Context, req workspace.LaunchRequest) (engine.Process, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.wg.Done()
	sl := s.slot(req.Workspace)
	if err := sl.acquire(ctx); err != nil {
		return nil, err
	}
	defer sl.mu.Unlock()
	err := s.store.View(ctx, func(tx store.Tx) error {
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
	var (
		amu      sync.Mutex
		admitted bool
		aerr     error
	)
	sreq := req.StartRequest
	alone := workspace.Incarnation(s.store) != ""
	if !alone {
		sreq.Admit = func(actx context.Context) error {
			err := s.admit(actx, req)
			amu.Lock()
			admitted, aerr = true, err
			amu.Unlock()
			return err
		}
	}
	p, err := s.engine.Start(ctx, sreq)
	if err != nil {
		return nil, err
	}
	amu.Lock()
	if !admitted && !alone {
		// The engine cannot hold a process: check the fence again now
		// that it runs, and stop it at once if it was fenced out
		// meanwhile (best effort: it may have run for that moment).
		aerr = s.recheck(ctx, req)
	}
	amu.Unlock()
	r := &running{session: req.Session, launch: req.LaunchID, proc: p, keep: req.KeepRecord, cleared: make(chan struct{})}
	if aerr != nil {
		if out, serr := s.stopProc(context.WithoutCancel(ctx), p); !out.Confirmed() {
			// It may still run: keep it, so that its end is recorded
			// and its record closed only then.
			s.log.Warn("a launch fenced out after its start was not confirmed stopped", zapLaunch(req.LaunchID), zapErr(serr))
			sl.run = r
			s.wg.Add(1)
			go s.watch(sl, r, req.OnExit)
			return p, aerr
		}
		return nil, aerr
	}
	sl.run = r
	s.wg.Add(1)
	go s.watch(sl, r, req.OnExit)
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
	out, e, err := p.svc().halt(ctx, ws, true)
	return out, e.public(), err
}

func (s *Service) halt(ctx context.Context, ws baton.WorkspaceID, deferred bool) (engine.StopOutcome, *ending, error) {
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
	reason := "stopped"
	if !alive(r.proc) {
		reason = endReason(r.proc.Exit())
	}
	end := &ending{s: s, session: r.session, launch: r.launch, reason: reason, endSession: true, finished: make(chan struct{})}
	sl.mu.Lock()
	if deferred && r.end == nil && !r.halted {
		r.end, r.halted = end, true
		sl.mu.Unlock()
		return out, end, err
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
		if clock.TimedOut(sctx) {
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
// with its record still open, and forgets it.
func (s *Service) takeExit(id baton.LaunchID) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.exited[id]
	delete(s.exited, id)
	return r, ok
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
// when it did not. The methods of a nil *ending do nothing.
type ending struct {
	s          *Service
	session    baton.SessionID
	launch     baton.LaunchID
	reason     string
	endSession bool
	finished   chan struct{} // closed by Finish; nil when nobody waits
	once       sync.Once
}

// ExitEnd returns the End of a process launched with
// LaunchRequest.KeepRecord that ended with status st: it closes the
// launch's record (it writes no session row).
func (p *supervisor) ExitEnd(launch baton.LaunchID, st engine.ExitStatus) *workspace.End {
	s := p.svc()
	if launch == "" {
		return nil
	}
	return (&ending{s: s, launch: launch, reason: endReason(st)}).public()
}

// Record writes the end inside tx. It writes nothing that is already on
// record (a launch closed, a row no longer running), so it may run in a
// transaction the store retries.
func (e *ending) Record(tx store.Tx) error {
	if e == nil {
		return nil
	}
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
	return workspace.RecordEnd(tx, cur, now)
}

// Finish settles the end once: recorded says that a transaction holding
// Record committed; otherwise the end is committed now, alone. It then
// frees what waited for it (the workspace's slot, after HaltDeferred).
func (e *ending) Finish(recorded bool) {
	if e == nil {
		return
	}
	e.once.Do(func() {
		switch {
		case recorded:
			e.s.disown(e.launch)
		case e.endSession:
			e.s.endWith(e.session, e.reason, false, false, e.launch)
		default:
			e.s.closeLaunch(e.launch, e.reason)
		}
		if e.finished != nil {
			close(e.finished)
		}
	})
}

// public returns e as the End the transfer coordinator records; nil when
// e is.
func (e *ending) public() *workspace.End {
	if e == nil {
		return nil
	}
	return workspace.NewEnd(e.Record, e.Finish)
}

// closeLaunch closes launch id's record in a commit of its own.
func (s *Service) closeLaunch(id baton.LaunchID, reason string) {
	err := s.store.Update(context.Background(), func(tx store.Tx) error { return workspace.LaunchGone(tx, id, reason, s.clock.Now()) })
	if err != nil {
		s.log.Warn("closing a launch record failed", zapLaunch(id), zapErr(err))
		return
	}
	s.disown(id)
}
