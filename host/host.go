package host

import (
	"context"
	"errors"
	"maps"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// Host serves sessions of one Runtime to clients over stream connections
// (unix sockets in practice) speaking the JSON Lines protocol, and hands
// over to a newer generation with Drain. It is safe for concurrent use.
type Host struct {
	rt     Runtime
	opts   Options
	log    *zap.Logger
	claims *claims
	owner  wire.Owner
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc

	wg       sync.WaitGroup
	done     chan struct{}
	doneOnce sync.Once
	doneErr  error

	mu         sync.Mutex
	ln         net.Listener
	served     bool
	byPath     map[string]*entry // every reserved path: opening, open or parking
	byID       map[string]*entry // open or parking sessions
	conns      map[*conn]struct{}
	nextConn   uint64
	draining   bool
	closed     bool
	successor  *wire.Successor
	drainStart time.Time
	parked     int
}

// New returns a host of rt. For a nil runtime or an invalid option (see
// Options) it returns an error matching baton.ErrInvalid, and creates
// nothing.
func New(rt Runtime, opts Options) (*Host, error) {
	if rt == nil {
		return nil, baton.Errorf(errInvalidOptions, "nil runtime")
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	owner := wire.Owner{PID: os.Getpid(), InstanceID: o.InstanceID, Generation: o.Generation}
	cl, err := newClaims(o.ClaimDir, owner)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{rt: rt, opts: o, claims: cl, owner: owner, ctx: ctx, cancel: cancel,
		log:  o.Logger.With(zap.String("instanceId", o.InstanceID), zap.Int("generation", o.Generation)),
		done: make(chan struct{}), byPath: map[string]*entry{}, byID: map[string]*entry{},
		conns: map[*conn]struct{}{}}
	return h, nil
}

// Info is what get_protocol_info answers: which host generation this is.
type Info struct {
	InstanceID string `json:"instanceId"`
	Generation int    `json:"generation"`
	PID        int    `json:"pid"`
	// Capabilities include "multi_session" and "generation_handoff".
	Capabilities []string `json:"capabilities"`
	Draining     bool     `json:"draining"`
}

// Info returns what get_protocol_info answers.
func (h *Host) Info() Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Info{InstanceID: h.owner.InstanceID, Generation: h.owner.Generation, PID: h.owner.PID,
		Capabilities: []string{"multi_session", "generation_handoff"}, Draining: h.draining}
}

// Serve accepts connections on ln and serves them until the host is done.
// It returns nil once a drain has finished (every session parked, every
// connection closed), ErrClosed once Close has finished, or ctx's error
// after ctx ends (it then closes the host as Close does, bounded by a
// second's wait). It returns a listener's failure while not draining
// (net.ErrClosed when the caller closed ln) as is, leaving the host's
// sessions open for Drain or Close. Serve closes ln when the host drains
// or closes. A second call returns an error matching baton.ErrConflict
// and closes nothing.
//
// A unix listener unlinks its socket file on Close by default; a host
// taken over by a successor must not remove the successor's entry, so
// callers should call SetUnlinkOnClose(false) on it.
func (h *Host) Serve(ctx context.Context, ln net.Listener) error {
	h.mu.Lock()
	if h.served {
		h.mu.Unlock()
		return errAlreadyServing
	}
	h.served = true
	var acceptErr chan error // nil, never ready, when the host already stopped
	if h.stoppedLocked() != nil {
		_ = ln.Close()
	} else {
		h.ln = ln
		if h.opts.IdleEvict > 0 {
			h.wg.Go(h.evictLoop)
		}
		acceptErr = make(chan error, 1)
		h.wg.Go(func() { acceptErr <- h.acceptLoop(ln) })
	}
	h.mu.Unlock()
	for {
		select {
		case <-h.done:
			return h.doneErr
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = h.Close(cctx)
			return ctx.Err()
		case err := <-acceptErr:
			acceptErr = nil
			if err != nil {
				return err
			}
		}
	}
}

var errAlreadyServing = baton.NewError(baton.ErrConflict, "host: already serving")

// acceptLoop returns nil when the listener was closed by Drain or Close,
// and the listener's error otherwise; a transient failure (out of file
// descriptors) is retried with a bounded back-off.
func (h *Host) acceptLoop(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			h.mu.Lock()
			stopping := h.stoppedLocked() != nil
			h.mu.Unlock()
			if stopping {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err // closed under us: nothing more to accept
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// Out of file descriptors and the like: back off, bounded.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			h.log.Warn("accept failed; retrying", zap.Error(err), zap.Duration("delay", delay))
			select {
			case <-time.After(delay):
				continue
			case <-h.ctx.Done():
				return nil
			}
		}
		delay = 0
		h.addConn(nc)
	}
}

// stoppedLocked is what open_session gets on a host that was closed
// (ErrClosed) or drains (ErrDraining); nil on a serving host. Host.mu held.
func (h *Host) stoppedLocked() error {
	if h.closed {
		return ErrClosed
	}
	if h.draining {
		return ErrDraining
	}
	return nil
}

// Close shuts the host down at once, without a handoff: it stops
// accepting, closes every session (a running turn is ended by the
// runtime's Close) with reason host_shutdown, flushes and closes every
// connection, and waits for every goroutine of the host to end. It returns
// ctx's error if they have not ended by then (they still end on their
// own), and nil otherwise; it is safe to call more than once and after a
// drain, when it only waits.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	first := !h.closed
	h.closed = true
	ln := h.ln
	entries := h.openLocked()
	h.mu.Unlock()
	if first {
		if ln != nil {
			_ = ln.Close()
		}
		for _, e := range entries {
			if e.markClosing() {
				h.closeEntry(e, wire.ReasonHostShutdown)
			}
		}
		// Sessions first, so their session_closed records are queued
		// before the connections are told to flush and close.
		h.mu.Lock()
		for c := range h.conns {
			c.closeAfterFlush()
		}
		h.mu.Unlock()
		h.cancel()
	}
	quiet := make(chan struct{})
	go func() {
		h.wg.Wait()
		h.doneOnce.Do(func() { h.doneErr = ErrClosed; close(h.done) })
		close(quiet)
	}()
	select {
	case <-quiet:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// openLocked lists the open (or parking) sessions; Host.mu held.
func (h *Host) openLocked() []*entry { return slices.Collect(maps.Values(h.byID)) }
