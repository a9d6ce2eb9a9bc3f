package proc

import (
	"context"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/syncx"
)

// DefaultStopGrace is the default of the engines' Options.StopGrace.
const DefaultStopGrace = 5 * time.Second

// Defaults returns the engines' shared options with their defaults: a
// zero grace means DefaultStopGrace and a negative one 0 (SIGKILL at
// once), a zero sig SIGKILL, a nil clk clock.Real, a nil log zap.NewNop.
func Defaults(grace time.Duration, sig syscall.Signal, clk clock.Clock, log *zap.Logger) (time.Duration, syscall.Signal, clock.Clock, *zap.Logger) {
	switch {
	case grace == 0:
		grace = DefaultStopGrace
	case grace < 0:
		grace = 0
	}
	if sig == 0 {
		sig = syscall.SIGKILL
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return grace, sig, clk, log
}

// Precheck is what both engines check first in Start: that the system
// runs launches (engine.ErrUnsupportedConfig, begun by name), ctx, and the
// configuration (validate's error); then it gives req a fresh launch id
// when it has none.
func Precheck(ctx context.Context, name string, req *engine.StartRequest, validate func(baton.EngineConfig) error) error {
	if !Supported {
		return baton.Errorf(engine.ErrUnsupportedConfig, "%s: %v", name, ErrUnsupported)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := validate(req.Config); err != nil {
		return err
	}
	if req.LaunchID == "" {
		req.LaunchID = baton.LaunchID(ids.New("launch"))
	}
	return nil
}

// ReapLaunch is both engines' engine.Reaper (see exec.Engine.ReapLaunch):
// Reap of launch id's marker with grace, its outcome and errors begun by
// name.
func ReapLaunch(ctx context.Context, name string, clk clock.Clock, id baton.LaunchID, grace time.Duration) (engine.StopOutcome, error) {
	if id == "" {
		return engine.Failed, baton.Errorf(baton.ErrInvalid, "%s: blank launch id", name)
	}
	found, err := Reap(ctx, clk, Marker(id), 0, 0, grace)
	switch {
	case err != nil && ctx.Err() != nil:
		return engine.Timeout, err
	case err != nil:
		return engine.Failed, baton.Errorf(baton.ErrUnavailable, "%s: reap %s: %v", name, id, err)
	case found:
		return engine.Stopped, nil
	}
	return engine.NotRunning, nil
}

// Launches is an engine's bookkeeping of its running launches: its lock,
// whether it was closed, its processes and the wait group of its
// goroutines. The zero value is ready to use.
type Launches[P interface {
	comparable
	engine.Process
}] struct {
	// Mu guards the launches and whatever of the engine's own state the
	// engine guards with it.
	Mu sync.Mutex
	// WG counts the engine's goroutines; Close waits for them.
	WG     sync.WaitGroup
	closed bool
	procs  map[P]struct{}
}

// ClosedLocked reports whether Close was called. Called with Mu held.
func (l *Launches[P]) ClosedLocked() bool { return l.closed }

// AddLocked records p as running and counts its goroutine in WG (the one
// that calls RemoveLocked at its end). Called with Mu held.
func (l *Launches[P]) AddLocked(p P) {
	if l.procs == nil {
		l.procs = map[P]struct{}{}
	}
	l.procs[p] = struct{}{}
	l.WG.Add(1)
}

// RemoveLocked forgets p. Called with Mu held.
func (l *Launches[P]) RemoveLocked(p P) { delete(l.procs, p) }

// Close marks the engine closed, stops every running launch (a confirmed
// stop each, see StopAll; launch names them), waits for WG, and then calls
// locked, when set, with Mu held. Errors: ctx's when some goroutine still
// runs (locked is not called then), else StopAll's.
func (l *Launches[P]) Close(ctx context.Context, launch func(P) baton.LaunchID, locked func()) error {
	l.Mu.Lock()
	l.closed = true
	procs := make([]P, 0, len(l.procs))
	for p := range l.procs {
		procs = append(procs, p)
	}
	l.Mu.Unlock()
	stopErr := StopAll(ctx, procs, launch)
	if err := syncx.Wait(ctx, &l.WG); err != nil {
		return err
	}
	if locked != nil {
		l.Mu.Lock()
		locked()
		l.Mu.Unlock()
	}
	return stopErr
}
