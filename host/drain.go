package host

import (
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/host/internal/wire"
)

// Drain hands the host over to its successor, which listens on the socket
// successor ("" when unknown; host_superseded then names none). It stops
// accepting connections; before anything else changes for a connection it
// queues host_superseded on every one (exactly once per connection, however
// often Drain is called); it closes the connections that hold no session;
// then it parks every session, attached or not, once it is settled,
// writing session_closed {reason: "handoff_parked"} to its connections
// and closing each one left holding nothing. A session is settled when
// its activity (if the runtime offers a snapshot) is not Busy and no host
// request for it is in flight; durable wake sources never hold it. No turn
// is cut short: when the grace expires the host rescans and logs what
// still holds it, and waits on. Serve returns nil when no session and no
// connection is left.
//
// Drain returns at once. It returns ErrClosed after Close, and nil
// otherwise; a repeated call changes nothing (the first successor stands).
func (h *Host) Drain(successor string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	if h.draining {
		h.log.Info("drain requested again; already draining")
		return nil
	}
	h.draining = true
	var next *wire.Successor
	if successor != "" {
		next = &wire.Successor{Socket: successor}
	}
	h.superseded = wire.MustLine(wire.Superseded{Type: wire.EventHostSuperseded, InstanceID: h.owner.InstanceID,
		Generation: h.owner.Generation, Successor: next})
	h.drainStart = h.opts.clock.Now()
	for c := range h.conns {
		c.enqueue(h.superseded)
		if len(c.sessions) == 0 {
			c.closeAfterFlush()
		}
	}
	if h.ln != nil {
		_ = h.ln.Close()
	}
	h.log.Info("generation superseded; draining", zap.String("successor", successor),
		zap.Int("sessions", len(h.byPath)), zap.Int("connections", len(h.conns)))
	h.wg.Go(h.drainLoop)
	return nil
}

// drainLoop parks what settles: at once, on every settle notification (the
// watchers tryPark starts), and on every sweep, which is the only way to
// find a settled session whose runtime offers no settle subscription.
func (h *Host) drainLoop() {
	clk := h.opts.clock
	grace := clk.NewTimer(h.opts.Grace)
	defer grace.Stop()
	h.sweep()
	h.checkDrained()
	for {
		tick := clk.NewTimer(h.opts.Sweep)
		select {
		case <-h.ctx.Done(): // the drain finished, or the host closed
			tick.Stop()
			return
		case <-tick.C():
			h.sweep()
		case <-grace.C():
			tick.Stop()
			h.sweep()
			h.reportGrace()
		}
	}
}

// sweep tries to park every open session. Parking is mostly system calls
// (the runtime closing files, the claim's close), so a few workers run
// it side by side.
func (h *Host) sweep() {
	h.mu.Lock()
	entries := h.openLocked()
	h.mu.Unlock()
	slots := make(chan struct{}, 16) // bounds the parks run at once
	var wg sync.WaitGroup
	for _, e := range entries {
		slots <- struct{}{}
		wg.Go(func() {
			h.tryPark(e)
			<-slots
		})
	}
	wg.Wait()
}

// tryPark parks e if the host drains and e is open and settled. A busy
// session with a settle subscription gets one watcher that retries on each
// notification until the session is gone.
func (h *Host) tryPark(e *entry) {
	h.closeOpen(e, wire.ReasonHandoffParked, func() bool {
		if !h.draining {
			return false // only a drain parks
		}
		_, _, busy := e.activityLocked()
		if busy && e.notify != nil && !e.watching {
			e.watching = true
			h.wg.Go(func() { h.watchSettle(e) })
		}
		return !busy
	})
}

func (h *Host) watchSettle(e *entry) {
	for {
		select {
		case <-e.notify:
			h.tryPark(e) // once it parks, e.gone is closed
		case <-e.gone:
			return
		case <-h.ctx.Done():
			return
		}
	}
}

// checkDrained finishes a drain once no session and no connection is left.
func (h *Host) checkDrained() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.draining || h.closed || len(h.byPath) > 0 || len(h.conns) > 0 {
		return
	}
	h.doneOnce.Do(func() {
		h.log.Info("drain finished; generation done", zap.Int("parked", h.parked),
			zap.Float64("elapsedMs", h.opts.clock.Now().Sub(h.drainStart).Seconds()*1000))
		close(h.done)
		h.cancel()
	})
}

// evictLoop closes sessions nobody is attached to once they have been idle
// for Options.IdleEvict, with reason idle_evicted. Its predicate is the
// broader one (busyForEviction): a durable wake source
// keeps a session open here, though it never holds a handoff. It stops
// when a drain starts (the drain parks everything) or the host closes.
func (h *Host) evictLoop() {
	clk := h.opts.clock
	period := min(h.opts.IdleEvict, time.Second)
	for {
		t := clk.NewTimer(period)
		select {
		case <-h.ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		h.mu.Lock()
		if h.stoppedLocked() != nil {
			h.mu.Unlock()
			return
		}
		entries := h.openLocked()
		h.mu.Unlock()
		now := clk.Now()
		for _, e := range entries {
			if h.closeOpen(e, wire.ReasonIdleEvicted, func() bool { return h.evictableLocked(e, now) }) {
				h.log.Info("idle session evicted", zap.String("sessionId", e.id), zap.String("path", e.path))
			}
		}
	}
}

// evictableLocked reports whether the open e has been unattached and idle,
// wake sources included, since at least IdleEvict before now, noting when
// it was first seen so; Host.mu and entry.mu held.
func (h *Host) evictableLocked(e *entry, now time.Time) bool {
	a, _, busy := e.activityLocked()
	switch {
	case len(e.conns) > 0 || busy || busyForEviction(a):
		e.idleSince = time.Time{}
	case e.idleSince.IsZero():
		e.idleSince = now
	default:
		return now.Sub(e.idleSince) >= h.opts.IdleEvict
	}
	return false
}

// hold is one session that still holds the generation, and why; the grace
// report logs it as JSON.
type hold struct {
	SessionID   string `json:"sessionId"`
	SessionPath string `json:"sessionPath"`
	// Phase is "opening", "open" or "closing".
	Phase string `json:"phase"`
	// Why lists what holds the session: "opening", "closing", "turn",
	// "tool", "compaction", "queued", "host_request". Wake sources are
	// never listed: they do not hold a handoff.
	Why []string `json:"why"`
	// ActivityKnown is false when the runtime offers no snapshot.
	ActivityKnown bool `json:"activityKnown"`
	Queued        int  `json:"queued"`
	WakeSources   int  `json:"wakeSources"`
	HostRequests  int  `json:"hostRequests"`
	Attachments   int  `json:"attachments"`
}

// holding lists every session this host still holds (reserved, open or
// closing), sorted by path, with its activity and in-flight requests.
func (h *Host) holding() []hold {
	h.mu.Lock()
	out := make([]hold, 0, len(h.byPath))
	for _, e := range h.byPath {
		e.mu.Lock()
		o := hold{SessionID: e.id, SessionPath: e.path, HostRequests: e.inflight, Attachments: len(e.conns),
			Phase: phases[e.state]}
		var a engine.Activity
		if e.state == stOpen {
			a, o.ActivityKnown, _ = e.activityLocked()
		} else {
			o.Why = []string{o.Phase}
		}
		e.mu.Unlock()
		o.Queued, o.WakeSources = a.Queued, a.WakeSources
		for i, on := range []bool{a.Turn, a.Tool, a.Compaction, a.Queued > 0, o.HostRequests > 0} {
			if on {
				o.Why = append(o.Why, whyNames[i])
			}
		}
		out = append(out, o)
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b hold) int { return strings.Compare(a.SessionPath, b.SessionPath) })
	return out
}

// phases name the entry states in a hold; whyNames name the activity that
// holds a session, in hold.Why's order.
var (
	phases   = [...]string{stOpening: "opening", stOpen: "open", stClosing: "closing"}
	whyNames = [...]string{"turn", "tool", "compaction", "queued", "host_request"}
)

// reportGrace logs, as one event, what still holds the generation when the
// grace expires. Nothing is aborted.
func (h *Host) reportGrace() {
	held := h.holding()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log.Warn("handoff grace expired; generation still held",
		zap.Duration("grace", h.opts.Grace), zap.Duration("elapsed", h.opts.clock.Now().Sub(h.drainStart)),
		zap.Int("sessionsHeld", len(held)), zap.Int("connections", len(h.conns)),
		zap.Any("holding", held))
}
