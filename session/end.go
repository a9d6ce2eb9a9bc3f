package session

import (
	"context"
	"errors"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

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
