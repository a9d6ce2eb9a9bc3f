package host

import (
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

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
	if h.closed {
		h.mu.Unlock()
		return ErrClosed
	}
	if h.draining {
		h.mu.Unlock()
		h.log.Info("drain requested again; already draining")
		return nil
	}
	h.draining = true
	if successor != "" {
		h.successor = &wire.Successor{Socket: successor}
	}
	h.drainStart = h.opts.clock.Now()
	line := h.supersededLineLocked()
	for c := range h.conns {
		c.enqueue(line)
		if len(c.sessions) == 0 {
			c.closeAfterFlush()
		}
	}
	ln := h.ln
	sessions, conns := len(h.byPath), len(h.conns)
	h.wg.Add(1)
	h.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	h.log.Info("generation superseded; draining", zap.String("successor", successor),
		zap.Int("sessions", sessions), zap.Int("connections", conns))
	go h.drainLoop()
	return nil
}

func (h *Host) supersededLineLocked() []byte {
	return wire.MustLine(wire.Superseded{Type: wire.EventHostSuperseded, InstanceID: h.owner.InstanceID,
		Generation: h.owner.Generation, Successor: h.successor})
}

// drainLoop parks what settles: at once, on every settle notification (the
// watchers tryPark starts), and on every sweep, which is the only way to
// find a settled session whose runtime offers no settle subscription.
func (h *Host) drainLoop() {
	defer h.wg.Done()
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
	workers := min(len(entries), sweepWorkers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(entries)); i = next.Add(1) - 1 {
				h.tryPark(entries[i])
			}
		})
	}
	wg.Wait()
}

// sweepWorkers bounds the parks a sweep runs at once.
const sweepWorkers = 16

// tryPark parks e if it is open and settled, and reports whether e is
// gone or going. A busy session with a settle subscription gets one
// watcher that retries on each notification.
func (h *Host) tryPark(e *entry) bool {
	e.mu.Lock()
	if e.state != stOpen {
		st := e.state
		e.mu.Unlock()
		return st >= stClosing
	}
	if _, _, busy := e.activityLocked(); busy {
		if e.notify != nil && !e.watching {
			e.watching = true
			h.wg.Go(func() { h.watchSettle(e) })
		}
		e.mu.Unlock()
		return false
	}
	e.state = stClosing
	e.mu.Unlock()
	h.closeEntry(e, wire.ReasonHandoffParked)
	return true
}

func (h *Host) watchSettle(e *entry) {
	for {
		select {
		case <-e.notify:
			if h.tryPark(e) {
				return
			}
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
	done := h.draining && !h.closed && len(h.byPath) == 0 && len(h.conns) == 0
	var elapsed float64
	if done {
		elapsed = h.opts.clock.Now().Sub(h.drainStart).Seconds() * 1000
	}
	parked := h.parked
	h.mu.Unlock()
	if !done {
		return
	}
	h.doneOnce.Do(func() {
		h.log.Info("drain finished; generation done", zap.Int("parked", parked), zap.Float64("elapsedMs", elapsed))
		close(h.done)
		h.cancel()
	})
}
