package proc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/ids"
	"github.com/batonhq/baton/internal/syncx"
	"github.com/batonhq/baton/transcript"
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
	sig = cmp.Or(sig, syscall.SIGKILL)
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return grace, sig, clk, log
}

// Accept is both engines' check of one configuration field: nil when v is
// blank, ok is nil or ok holds v; otherwise an engine.ErrUnsupportedConfig
// error begun by name that lists ok.
func Accept(name, what, v string, ok []string) error {
	if v == "" || ok == nil || slices.Contains(ok, v) {
		return nil
	}
	return baton.Errorf(engine.ErrUnsupportedConfig, "%s: %s %q (accepted: %s)", name, what, v, strings.Join(ok, ", "))
}

// Precheck is what both engines check first in Start: that the system
// runs launches (engine.ErrUnsupportedConfig, begun by name), ctx, and the
// configuration (validate's error); then it gives req a fresh launch id
// when it has none, and checks that req.Dir, when set, is a directory (an
// error matching baton.ErrUnavailable).
func Precheck(ctx context.Context, name string, req *engine.StartRequest, validate func(baton.EngineConfig) error) error {
	if !Supported {
		return baton.Errorf(engine.ErrUnsupportedConfig, "%s: %v", name, ErrUnsupported)
	}
	if err := cmp.Or(ctx.Err(), validate(req.Config)); err != nil {
		return err
	}
	if req.LaunchID == "" {
		req.LaunchID = baton.LaunchID(ids.New("launch"))
	}
	if req.Dir != "" {
		// Go reports a missing working directory as the binary's absence:
		// say what is missing.
		if fi, err := os.Stat(req.Dir); err != nil || !fi.IsDir() {
			return baton.Errorf(baton.ErrUnavailable, "%s: working directory %q is not a directory", name, req.Dir)
		}
	}
	return nil
}

// Env is a child's environment: base (the host's at the call when nil)
// and then each of extra, without their LaunchEnv entries, then launch
// id's marker.
func Env(base []string, id baton.LaunchID, extra ...[]string) []string {
	if base == nil {
		base = os.Environ()
	}
	env := slices.DeleteFunc(slices.Concat(append([][]string{base}, extra...)...), func(kv string) bool {
		return strings.HasPrefix(kv, LaunchEnv+"=")
	})
	return append(env, string(Marker(id)))
}

// Started is how both engines' transcripts record the start of req's
// launch of agent name: a lifecycle event, then the prompt.
func Started(name string, req engine.StartRequest) []transcript.Event {
	mode := "fresh"
	if req.Mode == engine.Resume {
		mode = "resume " + req.NativeID
	}
	return []transcript.Event{
		{Kind: transcript.Lifecycle, Text: fmt.Sprintf("%s launch %s started (%s, %s turn)", name, req.LaunchID, mode, req.Turn)},
		{Speaker: transcript.User, Kind: transcript.Message, Text: req.Prompt},
	}
}

// Ended is how both engines' transcripts record that launch id ended
// with x; verb says how ("exited", "ended").
func Ended(id baton.LaunchID, verb string, x engine.ExitStatus) transcript.Event {
	s := fmt.Sprintf("launch %s %s with code %d", id, verb, x.Code)
	if x.Stopped {
		s += " (stopped)"
	}
	if x.Err != nil {
		s += ": " + x.Err.Error()
	}
	return transcript.Event{Kind: transcript.Lifecycle, Text: s}
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

// Start calls start with Mu held, unless Close was called
// (engine.ErrClosed is returned then), and records the process it returns as running, counting
// its goroutine in WG (the one that calls RemoveLocked at its end).
func (l *Launches[P]) Start(start func() (P, error)) (P, error) {
	l.Mu.Lock()
	defer l.Mu.Unlock()
	if l.closed {
		return *new(P), engine.ErrClosed
	}
	p, err := start()
	if err != nil {
		return p, err
	}
	if l.procs == nil {
		l.procs = map[P]struct{}{}
	}
	l.procs[p] = struct{}{}
	l.WG.Add(1)
	return p, nil
}

// RemoveLocked forgets p. Called with Mu held.
func (l *Launches[P]) RemoveLocked(p P) { delete(l.procs, p) }

// Close marks the engine closed, stops every running launch at once (a
// confirmed stop each within ctx; launch names them), waits for WG, and
// then calls locked, when set, with Mu held. Errors: ctx's when some
// goroutine still runs (locked is not called then), else those of the
// launches whose stop was not confirmed, each naming its launch.
func (l *Launches[P]) Close(ctx context.Context, launch func(P) baton.LaunchID, locked func()) error {
	l.Mu.Lock()
	l.closed = true
	procs := slices.Collect(maps.Keys(l.procs))
	l.Mu.Unlock()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() {
			if o, err := p.Stop(ctx); !o.Confirmed() {
				errs[i] = fmt.Errorf("launch %s: %s: %v", launch(p), o, err)
			}
		})
	}
	wg.Wait()
	if err := syncx.Wait(ctx, &l.WG); err != nil {
		return err
	}
	if locked != nil {
		l.Mu.Lock()
		locked()
		l.Mu.Unlock()
	}
	return errors.Join(errs...)
}
