package host

import (
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton/host/internal/wire"
)

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
			h.tryEvict(e, now)
		}
	}
}

// tryEvict evicts e if it has been unattached and idle, wake sources
// included, since at least IdleEvict before now.
//
// Host.mu is held throughout the decision, so no connection can attach
// between the check and the eviction.
func (h *Host) tryEvict(e *entry, now time.Time) {
	h.mu.Lock()
	e.mu.Lock()
	evict := false
	if e.state == stOpen {
		a, _, busy := e.activityLocked()
		switch {
		case len(e.conns) > 0 || busy || busyForEviction(a):
			e.idleSince = time.Time{}
		case e.idleSince.IsZero():
			e.idleSince = now
		case now.Sub(e.idleSince) >= h.opts.IdleEvict:
			e.state = stClosing
			evict = true
		}
	}
	e.mu.Unlock()
	h.mu.Unlock()
	if !evict {
		return
	}
	h.log.Info("idle session evicted", zap.String("sessionId", e.id), zap.String("path", e.path))
	h.closeEntry(e, wire.ReasonIdleEvicted)
}
