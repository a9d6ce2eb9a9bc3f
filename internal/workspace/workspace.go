package workspace

import (
	"errors"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/store"
)

// CheckWorkspaceID validates a workspace id the way every baton entry point
// does: 1..baton.MaxIDLen printable bytes after trimming. Errors: an
// error matching baton.ErrInvalid.
func CheckWorkspaceID(ws baton.WorkspaceID) error {
	return baton.CheckField("workspaceId", string(ws))
}

// GetWorkspace reads a workspace inside tx, validating its id first.
// Errors: baton.ErrInvalid (malformed id), ErrNoWorkspace, the store's.
// Every package reads a caller-named workspace through it, so the answer
// to a bad or unknown id is the same everywhere.
func GetWorkspace(tx store.Tx, ws baton.WorkspaceID) (store.Workspace, error) {
	if err := CheckWorkspaceID(ws); err != nil {
		return store.Workspace{}, err
	}
	w, err := tx.GetWorkspace(ws)
	if errors.Is(err, store.ErrNotFound) {
		return store.Workspace{}, baton.Errorf(ErrNoWorkspace, "%s", ws)
	}
	return w, err
}

// GetActive is GetWorkspace refusing an archived workspace: ErrArchived.
func GetActive(tx store.Tx, ws baton.WorkspaceID) (store.Workspace, error) {
	w, err := GetWorkspace(tx, ws)
	if err == nil && w.Archived {
		return store.Workspace{}, ErrArchived
	}
	return w, err
}

// CheckConfig validates an engine configuration against eng the way every
// baton entry point does: well formed, and offered by the engine (an
// engine.Registry knows its engine names; an engine.Validator checks the
// rest). Errors match baton.ErrInvalid and, for a configuration the
// engines do not offer, engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig as well.
func CheckConfig(eng engine.Engine, cfg baton.EngineConfig) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	var err error
	switch e := eng.(type) {
	case engine.Registry:
		err = e.Validate(cfg)
	case engine.Validator:
		err = e.Validate(cfg.Normalize())
	}
	if err != nil {
		return fmt.Errorf("%w: engine config: %w", baton.ErrInvalid, err)
	}
	return nil
}

// Errors of the workspace rules. Package session exports each under the
// same name; package handoff exports some of them again.
var (
	// ErrWorkspaceBusy: the workspace is reserved (a session transfer is
	// pending) and the caller did not present the owner token.
	ErrWorkspaceBusy = baton.NewError(baton.ErrBusy, "workspace is reserved by a pending session transfer")
	// ErrStaleEpoch: an owner token of an older reservation was presented.
	ErrStaleEpoch = baton.NewError(baton.ErrStale, "the reservation was taken again since that token was issued")
	// ErrNoWorkspace: no workspace has that id.
	ErrNoWorkspace = baton.NewError(baton.ErrNotFound, "no such workspace")
	// ErrArchived: the workspace is archived and takes no new work.
	ErrArchived = baton.NewError(baton.ErrConflict, "workspace is archived")
	// ErrNoSession: there is no session to resume or message.
	ErrNoSession = baton.NewError(baton.ErrNotFound, "no such session")
)

// A Link carries, inside a public type of another package of this module,
// a value only this module's packages may reach: package session's
// Service embeds one (under an unexported alias, so the field is
// unexported) holding its process supervisor, and package handoff reaches
// that supervisor through Of without either package exporting it.
type Link struct{ v any }

// NewLink returns a Link carrying v.
func NewLink(v any) Link { return Link{v} }

func (l Link) linked() any { return l.v }

// Of returns what the Link embedded in x carries, or nil when x embeds
// none.
func Of(x any) any {
	if l, ok := x.(interface{ linked() any }); ok {
		return l.linked()
	}
	return nil
}

// RecordUsage sets, on row s, the context usage u that the turn of
// launch reported as it settled (its exit status's Usage), with the
// launch: the row keeps the last usage reported. A turn that reported
// none (no tokens) keeps the row's last usage, so that an engine that
// reports nothing leaves it zero. Callers call it in the transaction that
// records the turn's end, so the usage and the end commit together.
func RecordUsage(s *store.Session, u engine.Usage, launch baton.LaunchID) {
	if u.Tokens > 0 {
		s.Usage = store.Usage{Tokens: u.Tokens, Window: max(u.Window, 0), Launch: launch}
	}
}

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
