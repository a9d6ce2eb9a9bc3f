package session

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/syncx"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
)

// errWorkspaceExists: CreateWorkspace with an id already in use.
var errWorkspaceExists = baton.NewError(baton.ErrConflict, "workspace already exists")

// ErrClosed is returned by a Service after Close, and by a
// handoff.Coordinator after its Shutdown (which closes its Service).
var ErrClosed = baton.NewError(baton.ErrUnavailable, "session service closed")

// Service runs ordinary sessions: starts, resumes, messages and stops
// outside any transfer, under the workspace's reservation. It owns the table
// of processes it launched, which the transfer coordinator shares, so that at
// most one process runs in a workspace at a time.
type Service struct {
	link
	store     store.Store
	engine    engine.Engine
	clock     clock.Clock
	log       *zap.Logger
	stopTime  time.Duration
	readyTime time.Duration
	id        string // base, a slash and a suffix of this Service's own
	base      string // Options.InstanceID, or a random one
	host      string

	mu       sync.Mutex
	slots    map[baton.WorkspaceID]*slot
	launches map[baton.LaunchID]bool // launched here, not yet seen end
	// exited are launches made with LaunchRequest.KeepRecord whose process
	// ended before their caller closed the record: the end's reason, for
	// CloseUnspawned.
	exited map[baton.LaunchID]string
	closed bool
	wg     sync.WaitGroup
	// onPressure, set by the transfer coordinator (OnPressure), creates
	// the transfer a settled turn made due (workspace.MarkPressure).
	onPressure func(ws baton.WorkspaceID, sid baton.SessionID)
	blind      atomic.Bool // the policy was found unable to fire (logged once)
}

// pressure returns the hook OnPressure set; nil when none was.
func (s *Service) pressure() func(baton.WorkspaceID, baton.SessionID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.onPressure
}

// OnPressure sets the hook that creates the context-pressure transfer a
// settled turn made due; without one, the policy is not applied.
func (p *supervisor) OnPressure(fn func(ws baton.WorkspaceID, sid baton.SessionID)) {
	s := p.svc()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onPressure = fn
}

// Options configure a Service; the zero value of a field means its
// default.
type Options struct {
	// Clock is the time source (default: the wall clock).
	Clock clock.Clock
	// Logger is the logger (default: zap.NewNop()).
	Logger *zap.Logger
	// InstanceID names this process in the launch records the Service
	// writes (default: a random id). The transfer coordinator gives the
	// service it creates its own instance id. A record's
	// store.Launch.Holder is the id, a slash and a random suffix minted by
	// New: a process restarted under the same id never takes a launch of
	// its earlier incarnation, which may still run, for one of its own.
	InstanceID string
	// StopTimeout bounds every stop the Service asks of an engine (Stop,
	// Close, a transfer's stops; default 30 seconds). A stop not
	// confirmed by then is reported as engine.Timeout: the process may
	// still run, and nothing takes it for stopped.
	StopTimeout time.Duration
	// ReadyTimeout bounds how long each launch the Service makes may take
	// to confirm readiness (engine.StartRequest.ReadyTimeout of a request
	// that sets none; default engine.DefaultReadyTimeout). See package
	// handoff, Timeouts, for the whole rule.
	ReadyTimeout time.Duration
}

// defaultStopTimeout bounds a stop the Service asks of an engine.
const defaultStopTimeout = 30 * time.Second

// New returns a Service over st that starts processes with eng (usually an
// engine.Registry). Errors: baton.ErrInvalid for a nil store or engine.
func New(st store.Store, eng engine.Engine, opts Options) (*Service, error) {
	if st == nil || eng == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "session.New: nil store or engine")
	}
	s := &Service{store: st, engine: eng, clock: opts.Clock, log: opts.Logger, slots: map[baton.WorkspaceID]*slot{},
		launches: map[baton.LaunchID]bool{}, exited: map[baton.LaunchID]string{}}
	s.link = workspace.NewLink(s.sup())
	s.clock, s.log = cmp.Or[clock.Clock](s.clock, clock.Real{}), cmp.Or(s.log, zap.NewNop())
	s.stopTime, s.readyTime = opts.StopTimeout, opts.ReadyTimeout
	if s.stopTime <= 0 {
		s.stopTime = defaultStopTimeout
	}
	if s.readyTime <= 0 {
		s.readyTime = engine.DefaultReadyTimeout
	}
	s.base = cmp.Or(opts.InstanceID, ids.New("svc"))
	s.id = s.base + "/" + ids.New("run")
	s.host, _ = os.Hostname() // "" when unknown
	return s, nil
}

// InstanceID returns the holder this Service writes in launch records
// (store.Launch.Holder): its Options.InstanceID (or random) id, a slash and a
// suffix of this Service's own.
func (p *supervisor) InstanceID() string { return p.id }

// Host returns the machine name this Service writes in launch records.
func (p *supervisor) Host() string { return p.host }

// Store returns the store the Service writes to.
func (p *supervisor) Store() store.Store { return p.store }

// Clock returns the Service's time source.
func (p *supervisor) Clock() clock.Clock { return p.clock }

// Logger returns the Service's logger.
func (p *supervisor) Logger() *zap.Logger { return p.log }

// BaseID returns the id the Service was given (Options.InstanceID), or the
// random one it chose: its InstanceID without the suffix of its own.
func (p *supervisor) BaseID() string { return p.base }

func (s *Service) enter() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.wg.Add(1)
	return nil
}

// Close refuses further launches, stops every process this Service
// launched that still runs (so that no watching goroutine outlives it), and
// waits for those goroutines until ctx is done. It returns ctx's error if the
// wait was cut short. Close is idempotent.
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	slots := slices.Collect(maps.Values(s.slots))
	s.mu.Unlock()
	for _, sl := range slots {
		sl.mu.Lock()
		r := sl.run
		sl.mu.Unlock()
		if r != nil && alive(r.proc) {
			if out, err := s.stopProc(ctx, r.proc); !out.Confirmed() {
				s.log.Warn("stop at close not confirmed", zapSession(r.session), zap.String("outcome", string(out)), zap.Error(err))
			}
		}
	}
	return syncx.Wait(ctx, &s.wg)
}

// CreateWorkspace inserts a workspace. ID must be a valid id, Name,
// Mission and Root within their limits (see baton.CheckField), Config a
// configuration the Service's engine offers (see CheckConfig), Share
// blank (stored as baton.ShareConversation) or a valid baton.Share, and
// Pressure, the context-pressure policy (see handoff.Coordinator.SetPressure),
// off or a threshold in [0, 1] with a target the engine offers. Errors:
// baton.ErrInvalid (also matching engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig for a configuration the engines do not
// offer), baton.ErrConflict (the id is in use).
func (s *Service) CreateWorkspace(ctx context.Context, w store.Workspace) (store.Workspace, error) {
	w.ID = baton.WorkspaceID(strings.TrimSpace(string(w.ID)))
	if err := workspace.CheckWorkspaceID(w.ID); err != nil {
		return store.Workspace{}, err
	}
	if err := checkFields("name", w.Name, "mission", w.Mission, "root", w.Root); err != nil {
		return store.Workspace{}, err
	}
	if err := w.Share.Validate(); err != nil {
		return store.Workspace{}, err
	}
	w.Share = cmp.Or(w.Share, baton.ShareConversation)
	if err := workspace.CheckConfig(s.engine, w.Config); err != nil {
		return store.Workspace{}, err
	}
	w.Config = w.Config.Normalize()
	p, err := workspace.CheckPressure(s.engine, w.Pressure)
	if err != nil {
		return store.Workspace{}, err
	}
	w.Pressure = p
	now := s.clock.Now()
	w.CreatedAt, w.UpdatedAt = now, now
	w.CurrentSession, w.ActivationCounter = "", 0
	w.Running, w.RankHead, w.Ranked = nil, "", true
	err = s.store.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.GetWorkspace(w.ID); !errors.Is(err, store.ErrNotFound) {
			if err == nil {
				err = baton.Errorf(errWorkspaceExists, "%s", w.ID)
			}
			return err
		}
		return tx.PutWorkspace(w)
	})
	return w, err
}

// ArchiveWorkspace marks a workspace archived: it takes no new work (no
// start, no transfer) and keeps its history. Archiving twice is a no-op.
// Errors: ErrNoWorkspace, ErrWorkspaceBusy while a transfer holds the
// reservation, ErrSessionRunning while a process runs there.
func (s *Service) ArchiveWorkspace(ctx context.Context, ws baton.WorkspaceID) error {
	if id, ok := s.Running(ws); ok {
		return baton.Errorf(ErrSessionRunning, "session %s", id)
	}
	return s.store.Update(ctx, func(tx store.Tx) error {
		w, err := workspace.GetWorkspace(tx, ws)
		if err != nil {
			return err
		}
		if err := workspace.CheckWritable(tx, ws, baton.Token{}, 0); err != nil {
			return err
		}
		if w.Archived {
			return nil
		}
		w.Archived, w.UpdatedAt = true, s.clock.Now()
		return tx.PutWorkspace(w)
	})
}

// SetShare changes what the briefings of a workspace's transfers carry to
// their target besides the record (see baton.Share; blank means
// baton.ShareConversation). A transfer already created keeps the choice it
// was created with. Safe to retry. Errors: baton.ErrInvalid (a bad
// workspace id or share), ErrNoWorkspace, ErrArchived.
func (s *Service) SetShare(ctx context.Context, ws baton.WorkspaceID, share baton.Share) (out store.Workspace, err error) {
	if err := share.Validate(); err != nil {
		return store.Workspace{}, err
	}
	share = cmp.Or(share, baton.ShareConversation)
	err = s.store.Update(ctx, func(tx store.Tx) error {
		w, err := workspace.GetActive(tx, ws)
		if err != nil {
			return err
		}
		if out = w; w.Share == share {
			return nil
		}
		out.Share, out.UpdatedAt = share, s.clock.Now()
		return tx.PutWorkspace(out)
	})
	return out, err
}

// Workspace returns a workspace. Errors: ErrNoWorkspace.
func (s *Service) Workspace(ctx context.Context, ws baton.WorkspaceID) (w store.Workspace, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error { w, err = workspace.GetWorkspace(tx, ws); return err })
	return w, err
}

// checkFields checks each name and value pair with baton.CheckField, in
// order.
func checkFields(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := baton.CheckField(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// List returns a workspace's records of one kind: its sessions in
// creation order, its instructions oldest first in every state, its wakeups
// ordered by time, or its continuations oldest first. For example:
//
//	wakeups, err := session.List[store.Wakeup](ctx, svc, ws)
//
// Errors: ErrNoWorkspace, the store's.
func List[T store.Session | store.Instruction | store.Wakeup | store.Continuation](ctx context.Context, s *Service, ws baton.WorkspaceID) (out []T, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetWorkspace(tx, ws); err != nil {
			return err
		}
		var err error
		switch p := any(&out).(type) {
		case *[]store.Session:
			*p, err = tx.ListSessions(ws)
		case *[]store.Instruction:
			*p, err = tx.ListInstructions(ws)
		case *[]store.Wakeup:
			*p, err = tx.ListWakeups(ws, "")
		case *[]store.Continuation:
			*p, err = tx.ListContinuations(ws)
		}
		return err
	})
	return out, err
}

// Current returns the workspace's current session. Errors: ErrNoSession,
// ErrNoWorkspace.
func (s *Service) Current(ctx context.Context, ws baton.WorkspaceID) (cur store.Session, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error { cur, err = workspace.Current(tx, ws); return err })
	return cur, err
}

// AssertWritable returns nil when a launch, message or other write may
// proceed in the workspace: ErrWorkspaceBusy while a transfer holds its
// reservation. Call it before any write a host makes on its own. Errors:
// also ErrNoWorkspace.
func (s *Service) AssertWritable(ctx context.Context, ws baton.WorkspaceID) error {
	return s.store.View(ctx, func(tx store.Tx) error {
		if _, err := workspace.GetWorkspace(tx, ws); err != nil {
			return err
		}
		return workspace.CheckWritable(tx, ws, baton.Token{}, 0)
	})
}

// supervisor is a Service as the transfer coordinator (package handoff)
// uses it: it launches and halts the processes of transfers through the
// Service's table of processes, reaps the launches of earlier processes
// and settles their records. Its methods are exported only to the
// interface package handoff declares, which reaches a Service's
// supervisor through the workspace.Link the Service embeds; no user of
// the module can name them.
type supervisor Service

// link carries a Service's supervisor (see workspace.Link); embedded under
// this unexported name, it adds no exported field to Service.
type link = workspace.Link

func (p *supervisor) svc() *Service { return (*Service)(p) }

func (s *Service) sup() *supervisor { return (*supervisor)(s) }

func zapSession(id baton.SessionID) zap.Field     { return zap.String("session", string(id)) }
func zapLaunch(id baton.LaunchID) zap.Field       { return zap.String("launch", string(id)) }
func zapWorkspace(id baton.WorkspaceID) zap.Field { return zap.String("workspace", string(id)) }

// Errors returned by this package. Match them with errors.Is; each is also
// matched by its code-level sentinel (baton.ErrBusy, ...).
var (
	// ErrWorkspaceBusy: the workspace is reserved (a session transfer is
	// pending) and the caller did not present the owner token.
	ErrWorkspaceBusy = workspace.ErrWorkspaceBusy
	// ErrSessionRunning: a process already runs in the workspace; at most
	// one may.
	ErrSessionRunning = baton.NewError(baton.ErrConflict, "a session is already running in the workspace")
	// ErrArchived: the workspace is archived and takes no new work.
	ErrArchived = workspace.ErrArchived
	// ErrNoWorkspace: no workspace has that id.
	ErrNoWorkspace = workspace.ErrNoWorkspace
	// ErrNoSession: there is no session to resume or message.
	ErrNoSession = workspace.ErrNoSession
	// ErrLaunchRefused: a launch's precondition (supplied by the caller,
	// for example "the transfer is still at this attempt") no longer holds.
	ErrLaunchRefused = baton.NewError(baton.ErrStale, "launch refused: its precondition no longer holds")
	// ErrResumeOnly: an automated trigger found nothing it may resume; it
	// never starts a briefed fresh session on its own.
	ErrResumeOnly = baton.NewError(baton.ErrConflict, "automated trigger may only resume, and there is nothing to resume")
)
