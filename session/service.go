package session

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/syncx"
	"github.com/batonhq/baton/store"
)

// ErrClosed is returned by a Service after Close.
var ErrClosed = baton.NewError(baton.EUNAVAILABLE, "session service closed")

// Service runs ordinary sessions: starts, resumes, messages and stops
// outside any transfer, under the workspace's reservation. It owns the table
// of processes it launched, which the transfer coordinator shares, so that at
// most one process runs in a workspace at a time.
type Service struct {
	store    store.Store
	engine   engine.Engine
	clock    clock.Clock
	log      *zap.Logger
	stopTime time.Duration
	id       string
	host     string

	mu       sync.Mutex
	slots    map[baton.WorkspaceID]*slot
	launches map[baton.LaunchID]bool // launched here, not yet seen end
	// exited are launches made with LaunchRequest.KeepRecord whose process
	// ended before their caller closed the record: the end's reason, for
	// CloseUnspawned.
	exited map[baton.LaunchID]string
	closed bool
	wg     sync.WaitGroup
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the time source (default: the wall clock).
func WithClock(c clock.Clock) Option { return func(s *Service) { s.clock = c } }

// WithLogger sets the logger (default: zap.NewNop()).
func WithLogger(l *zap.Logger) Option { return func(s *Service) { s.log = l } }

// WithInstanceID names this process in the launch records it writes
// (store.Launch.Holder; default: a random id). The transfer coordinator
// gives the service it creates its own instance id.
func WithInstanceID(id string) Option { return func(s *Service) { s.id = id } }

// DefaultStopTimeout bounds a stop the Service asks of an engine.
const DefaultStopTimeout = 30 * time.Second

// WithStopTimeout bounds every stop the Service asks of an engine (Halt,
// Stop, Close; default DefaultStopTimeout, and d <= 0 means the default).
// A stop not confirmed by then is reported as engine.Timeout: the process
// may still run, and nothing takes it for stopped.
func WithStopTimeout(d time.Duration) Option { return func(s *Service) { s.stopTime = d } }

// New returns a Service over st that starts processes with eng (usually an
// *engine.Registry). Errors: baton.ErrInvalid for a nil store or engine.
func New(st store.Store, eng engine.Engine, opts ...Option) (*Service, error) {
	if st == nil || eng == nil {
		return nil, baton.Errorf(baton.ErrInvalid, "session.New: nil store or engine")
	}
	s := &Service{store: st, engine: eng, clock: clock.Real{}, log: zap.NewNop(), slots: map[baton.WorkspaceID]*slot{},
		launches: map[baton.LaunchID]bool{}, exited: map[baton.LaunchID]string{}}
	for _, o := range opts {
		o(s)
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	if s.stopTime <= 0 {
		s.stopTime = DefaultStopTimeout
	}
	if s.id == "" {
		s.id = ids.New("svc")
	}
	if h, err := os.Hostname(); err == nil {
		s.host = h
	}
	return s, nil
}

// InstanceID returns the id this Service writes in launch records.
func (s *Service) InstanceID() string { return s.id }

// Host returns the machine name this Service writes in launch records.
func (s *Service) Host() string { return s.host }

// Store returns the store the Service writes to.
func (s *Service) Store() store.Store { return s.store }

// Clock returns the Service's time source.
func (s *Service) Clock() clock.Clock { return s.clock }

// Engine returns the engine the Service launches with.
func (s *Service) Engine() engine.Engine { return s.engine }

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
	slots := make([]*slot, 0, len(s.slots))
	for _, sl := range s.slots {
		slots = append(slots, sl)
	}
	s.mu.Unlock()
	for _, sl := range slots {
		sl.mu.Lock()
		r := sl.run
		sl.mu.Unlock()
		if r != nil && alive(r.proc) {
			if out, err := s.stopProc(ctx, r.proc); !out.Confirmed() {
				s.log.Warn("stop at close not confirmed", zapSession(r.session), zap.String("outcome", string(out)), zapErr(err))
			}
		}
	}
	return syncx.Wait(ctx, &s.wg)
}

// CreateWorkspace inserts a workspace. ID must be a valid id and Config a
// configuration the Service's engine offers (see CheckConfig). Errors:
// baton.ErrInvalid (also matching engine.ErrUnknownEngine or
// engine.ErrUnsupportedConfig for a configuration the engines do not
// offer), ErrWorkspaceExists.
func (s *Service) CreateWorkspace(ctx context.Context, w store.Workspace) (store.Workspace, error) {
	w.ID = baton.WorkspaceID(strings.TrimSpace(string(w.ID)))
	if err := CheckWorkspaceID(w.ID); err != nil {
		return store.Workspace{}, err
	}
	if err := CheckConfig(s.engine, w.Config); err != nil {
		return store.Workspace{}, err
	}
	w.Config = w.Config.Normalize()
	now := s.clock.Now()
	w.CreatedAt, w.UpdatedAt = now, now
	w.CurrentSession, w.ActivationCounter = "", 0
	w.Running, w.RankHead, w.Ranked = nil, "", true
	err := s.store.Update(ctx, func(tx store.Tx) error { return tx.InsertWorkspace(w) })
	if errors.Is(err, store.ErrDuplicate) {
		return store.Workspace{}, baton.Errorf(ErrWorkspaceExists, "%s", w.ID)
	}
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
		w, err := GetWorkspace(tx, ws)
		if err != nil {
			return err
		}
		if err := CheckWritable(tx, ws, Owner{}); err != nil {
			return err
		}
		if w.Archived {
			return nil
		}
		w.Archived, w.UpdatedAt = true, s.clock.Now()
		return tx.PutWorkspace(w)
	})
}

// Workspace returns a workspace. Errors: ErrNoWorkspace.
func (s *Service) Workspace(ctx context.Context, ws baton.WorkspaceID) (w store.Workspace, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error { w, err = GetWorkspace(tx, ws); return err })
	return w, err
}

// Sessions returns a workspace's sessions in creation order.
func (s *Service) Sessions(ctx context.Context, ws baton.WorkspaceID) (out []store.Session, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error {
		if _, err := GetWorkspace(tx, ws); err != nil {
			return err
		}
		out, err = tx.ListSessions(ws)
		return err
	})
	return out, err
}

// Current returns the workspace's current session. Errors: ErrNoSession,
// ErrNoWorkspace.
func (s *Service) Current(ctx context.Context, ws baton.WorkspaceID) (cur store.Session, err error) {
	err = s.store.View(ctx, func(tx store.Tx) error { cur, err = Current(tx, ws); return err })
	return cur, err
}

// AssertWritable returns nil when a launch, message or other write may
// proceed in the workspace with owner (the zero Owner for callers outside a
// transfer): ErrWorkspaceBusy or ErrStaleEpoch while a reservation is held by
// someone else. Call it before any write a host makes on its own.
func (s *Service) AssertWritable(ctx context.Context, ws baton.WorkspaceID, owner Owner) error {
	return s.store.View(ctx, func(tx store.Tx) error {
		if _, err := GetWorkspace(tx, ws); err != nil {
			return err
		}
		return CheckWritable(tx, ws, owner)
	})
}

// newSessionID mints a session id.
func newSessionID() baton.SessionID { return baton.SessionID(ids.New("ses")) }
