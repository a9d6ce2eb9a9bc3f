package host

import (
	"slices"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton/engine"
)

// Hold is one session that still holds the generation, and why.
type Hold struct {
	SessionID   string `json:"sessionId"`
	SessionPath string `json:"sessionPath"`
	// Phase is "opening", "open" or "closing".
	Phase string `json:"phase"`
	// Activity is the runtime's snapshot; ActivityKnown is false when the
	// runtime offers none.
	Activity      engine.Activity `json:"activity"`
	ActivityKnown bool            `json:"activityKnown"`
	HostRequests  int             `json:"hostRequests"`
	Attachments   int             `json:"attachments"`
}

// Why lists what holds the session: "opening", "closing", "turn", "tool",
// "compaction", "queued", "host_request". Wake sources are never listed:
// they do not hold a handoff.
func (o Hold) Why() []string {
	var why []string
	if o.Phase != "open" {
		why = append(why, o.Phase)
	}
	a := o.Activity
	for _, w := range []struct {
		on   bool
		name string
	}{{a.Turn, "turn"}, {a.Tool, "tool"}, {a.Compaction, "compaction"}, {a.Queued > 0, "queued"}, {o.HostRequests > 0, "host_request"}} {
		if w.on {
			why = append(why, w.name)
		}
	}
	return why
}

// MarshalLogObject logs a hold as one object.
func (o Hold) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("sessionId", o.SessionID)
	enc.AddString("sessionPath", o.SessionPath)
	enc.AddString("phase", o.Phase)
	_ = enc.AddArray("why", zapcore.ArrayMarshalerFunc(func(ae zapcore.ArrayEncoder) error {
		for _, w := range o.Why() {
			ae.AppendString(w)
		}
		return nil
	}))
	enc.AddBool("activityKnown", o.ActivityKnown)
	enc.AddInt("queued", o.Activity.Queued)
	enc.AddInt("wakeSources", o.Activity.WakeSources)
	enc.AddInt("hostRequests", o.HostRequests)
	enc.AddInt("attachments", o.Attachments)
	return nil
}

type holds []Hold

func (hs holds) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	for _, o := range hs {
		if err := enc.AppendObject(o); err != nil {
			return err
		}
	}
	return nil
}

// Holding lists every session this host still holds (reserved, open or
// closing), sorted by path, with its activity and in-flight requests.
func (h *Host) Holding() []Hold {
	h.mu.Lock()
	out := make([]Hold, 0, len(h.byPath))
	for _, e := range h.byPath {
		e.mu.Lock()
		o := Hold{SessionID: e.id, SessionPath: e.path, HostRequests: e.inflight, Attachments: len(e.conns)}
		switch e.state {
		case stOpening:
			o.Phase = "opening"
		case stOpen:
			o.Phase = "open"
			o.Activity, o.ActivityKnown, _ = e.activityLocked()
		default:
			o.Phase = "closing"
		}
		e.mu.Unlock()
		out = append(out, o)
	}
	h.mu.Unlock()
	slices.SortFunc(out, func(a, b Hold) int { return strings.Compare(a.SessionPath, b.SessionPath) })
	return out
}

// reportGrace logs, as one event, what still holds the generation when the
// grace expires. Nothing is aborted.
func (h *Host) reportGrace() {
	held := h.Holding()
	h.mu.Lock()
	conns := len(h.conns)
	elapsed := h.opts.clock.Now().Sub(h.drainStart)
	h.mu.Unlock()
	h.log.Warn("handoff grace expired; generation still held",
		zap.Duration("grace", h.opts.Grace), zap.Duration("elapsed", elapsed),
		zap.Int("sessionsHeld", len(held)), zap.Int("connections", conns),
		zap.Array("holding", holds(held)))
}
