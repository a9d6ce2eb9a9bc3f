package workspace

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// LaunchRequest asks package session's supervisor to start an engine process under the
// workspace's rules. The embedded TurnRequest is passed to the engine; its
// Owner token must be the reservation's when one is held.
type LaunchRequest struct {
	engine.StartRequest
	// Epoch is the reservation epoch the Owner token was minted for.
	Epoch int64
	// Precheck, when set, runs in a read transaction under the workspace's
	// launch lock just before the engine is called; an error refuses the
	// launch (wrapped in ErrLaunchRefused). The transfer coordinator uses it
	// to refuse a launch once a Stop was requested or the attempt moved on.
	Precheck func(tx store.Tx) error
	// OnExit, when set, runs after the process has ended (in the watcher
	// goroutine), with the exit status.
	OnExit func(engine.ExitStatus)
	// KeepRecord leaves the launch's record to the caller when the process
	// ends on its own: the caller closes it inside the transaction that acts
	// on the exit (the supervisor's ExitEnd), so that the exit costs no commit of its own.
	// Until then its CloseUnspawned treats the launch as ended and closes it
	// when its transfer settles another way. Without KeepRecord the
	// supervisor closes the record in a commit of its own when the process
	// ends.
	KeepRecord bool
}

// An End is the end of a process launched through package session's
// supervisor, to be recorded inside a transaction of the caller's rather
// than in a commit of its own: the launch's record is closed and, for a
// stopped run, its session row is marked ended (and the workspace's
// current session refreshed). Record it with Record inside the
// transaction that acts on the end, then call Finish once, saying whether
// that transaction committed; Finish commits the end alone when it did
// not. The methods of a nil *End do nothing.
type End struct {
	record func(store.Tx) error
	finish func(recorded bool)
}

// NewEnd returns the End that record writes and finish settles.
func NewEnd(record func(store.Tx) error, finish func(recorded bool)) *End {
	return &End{record: record, finish: finish}
}

// Record writes the end inside tx. It writes nothing that is already on
// record (a launch closed, a row no longer running), so it may run in a
// transaction the store retries.
func (e *End) Record(tx store.Tx) error {
	if e == nil {
		return nil
	}
	return e.record(tx)
}

// Finish settles the end once: recorded says that a transaction holding
// Record committed; otherwise the end is committed now, alone. It then
// frees what waited for it (the workspace's slot, after HaltDeferred).
func (e *End) Finish(recorded bool) {
	if e != nil {
		e.finish(recorded)
	}
}

// Reaped is a launch of an earlier process that a reap dealt with: its
// record and what the engine answered (handoff.Reaped is its public view).
type Reaped struct {
	store.Launch
	// Outcome is the engine's answer: engine.Stopped (processes of the
	// launch were found running and were killed), engine.NotRunning (none
	// ran any more), engine.Timeout or engine.Failed (not confirmed gone).
	Outcome engine.StopOutcome
	// Err says why a launch was not confirmed gone; nil when it was.
	Err error
}

// ReapResult says what the supervisor's Reap did with the launches of
// earlier processes.
type ReapResult struct {
	// Gone were confirmed gone (killed, or found not running) and marked
	// so.
	Gone []Reaped
	// Unconfirmed may still run: their engine is not an engine.Reaper, or
	// its reap was not confirmed. Their workspaces stay held.
	Unconfirmed []Reaped
	// Ended are the sessions whose rows still said running and were marked
	// ended, their process gone: a row left running would stay its
	// workspace's current session.
	Ended []baton.SessionID
}
