package host

import (
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/batonhq/baton/engine"
)

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
		o := hold{SessionID: e.id, SessionPath: e.path, HostRequests: e.inflight, Attachments: len(e.conns)}
		var a engine.Activity
		switch e.state {
		case stOpening:
			o.Phase = "opening"
		case stOpen:
			o.Phase = "open"
			a, o.ActivityKnown, _ = e.activityLocked()
		default:
			o.Phase = "closing"
		}
		e.mu.Unlock()
		o.Queued, o.WakeSources = a.Queued, a.WakeSources
		if o.Phase != "open" {
			o.Why = append(o.Why, o.Phase)
		}
		for _, w := range []struct {
			on   bool
			name string
		}{{a.Turn, "turn"}, {a.Tool, "tool"}, {a.Compaction, "compaction"}, {a.Queued > 0, "queued"}, {o.HostRequests > 0, "host_request"}} {
			if w.on {
				o.Why = append(o.Why, w.name)
			}
		}
		out = append(out, o)
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b hold) int { return strings.Compare(a.SessionPath, b.SessionPath) })
	return out
}

// reportGrace logs, as one event, what still holds the generation when the
// grace expires. Nothing is aborted.
func (h *Host) reportGrace() {
	held := h.holding()
	h.mu.Lock()
	conns := len(h.conns)
	elapsed := h.opts.clock.Now().Sub(h.drainStart)
	h.mu.Unlock()
	h.log.Warn("handoff grace expired; generation still held",
		zap.Duration("grace", h.opts.Grace), zap.Duration("elapsed", elapsed),
		zap.Int("sessionsHeld", len(held)), zap.Int("connections", conns),
		zap.Any("holding", held))
}
