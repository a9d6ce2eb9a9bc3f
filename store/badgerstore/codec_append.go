package badgerstore

import (
	"encoding/hex"
	"strconv"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/jsonesc"
)

// The records a transfer writes (handoffs, sessions, workspaces,
// reservations, launches, and the head of a feed entry) are encoded by
// hand: the same bytes encoding/json's Marshal writes for them (field
// order, omitempty and omitzero, its string escaping, RFC 3339 times),
// without reflection and in one buffer, at a fraction of the CPU.
// TestAppendMatchesMarshal checks the equality on random records, so the
// stored format is unchanged and either encoder reads the other's output.
// A record the hand encoder cannot write exactly (a time json refuses)
// goes through json.Marshal, which returns its error.

// object appends one JSON object's fields to b.
type object struct {
	b   []byte
	n   int  // fields written
	bad bool // a value json.Marshal refuses: use it instead
}

func (o *object) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	} else {
		o.b = append(o.b, '{')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

// end closes the object and returns it.
func (o *object) end() []byte {
	if o.n == 0 {
		return append(o.b, '{', '}')
	}
	return append(o.b, '}')
}

func (o *object) str(name, v string) {
	o.key(name)
	o.b = jsonesc.Append(o.b, v)
}

func (o *object) strOmit(name, v string) {
	if v != "" {
		o.str(name, v)
	}
}

func (o *object) int(name string, v int64) {
	o.key(name)
	o.b = strconv.AppendInt(o.b, v, 10)
}

func (o *object) intOmit(name string, v int64) {
	if v != 0 {
		o.int(name, v)
	}
}

func (o *object) uint(name string, v uint64) {
	o.key(name)
	o.b = strconv.AppendUint(o.b, v, 10)
}

func (o *object) boolOmit(name string, v bool) {
	if v {
		o.key(name)
		o.b = append(o.b, "true"...)
	}
}

// time writes t (omitzero) as json does: its MarshalJSON, the RFC 3339
// of AppendText quoted.
func (o *object) time(name string, t time.Time) {
	if t.IsZero() {
		return
	}
	o.key(name)
	o.b = append(o.b, '"')
	b, err := t.AppendText(o.b)
	if err != nil {
		o.bad = true
		return
	}
	o.b = append(b, '"')
}

// hash writes h (omitzero) as its MarshalText, a JSON string.
func (o *object) hash(name string, h hexHash) {
	if h.IsZero() {
		return
	}
	o.key(name)
	o.b = append(o.b, '"')
	o.b = hex.AppendEncode(o.b, h[:])
	o.b = append(o.b, '"')
}

// config writes c (omitzero: left out when every field is empty).
func (o *object) config(name string, c baton.EngineConfig) {
	if c == (baton.EngineConfig{}) {
		return
	}
	o.key(name)
	in := object{b: o.b}
	in.str("engine", c.Engine)
	in.strOmit("model", c.Model)
	in.strOmit("reasoningEffort", c.ReasoningEffort)
	in.strOmit("permissionMode", c.PermissionMode)
	in.strOmit("account", c.Account)
	o.b = in.end()
}

// appendRecord appends the JSON of v if it is one of the records encoded
// by hand; ok is false for any other value, and for a value json.Marshal
// must encode (or refuse) itself.
func appendRecord(b []byte, v any) (out []byte, ok bool) {
	o := object{b: b}
	// grow makes room for about the usual size of the record, so that a
	// fresh buffer is allocated once and not much larger than needed
	// (the cache of decoded records keeps it).
	grow := func(n int) {
		if cap(o.b)-len(o.b) < n {
			o.b = append(make([]byte, 0, len(o.b)+n), o.b...)
		}
	}
	switch v := v.(type) {
	case handoffV1:
		grow(640 + len(v.Report) + len(v.Facts) + len(v.Error) + 160*len(v.History))
		o.handoff(&v)
	case sessionV1:
		grow(384)
		o.session(&v)
	case workspaceV1:
		grow(320 + len(v.Mission) + len(v.Root) + 40*len(v.Running))
		o.workspace(&v)
	case reservationV1:
		grow(320)
		o.reservation(&v)
	case launchV1:
		grow(320)
		o.launch(&v)
	case changeV1:
		grow(96)
		if v.Handoff != nil || v.Session != nil || v.Instruction != nil {
			return nil, false
		}
		o.str("workspace", string(v.Workspace))
		o.int("seq", v.Seq)
		o.str("kind", string(v.Kind))
	default:
		return nil, false
	}
	if o.bad {
		return nil, false
	}
	return o.end(), true
}

func (o *object) handoff(h *handoffV1) {
	o.str("id", string(h.ID))
	o.str("workspace", string(h.Workspace))
	o.str("requestId", h.RequestID)
	o.strOmit("fingerprint", h.Fingerprint)
	o.strOmit("state", string(h.State))
	o.intOmit("attempt", int64(h.Attempt))
	o.strOmit("sourceSession", string(h.SourceSession))
	o.strOmit("targetSession", string(h.TargetSession))
	o.config("sourceConfig", h.SourceConfig)
	o.config("targetConfig", h.TargetConfig)
	o.boolOmit("generateSummary", h.GenerateSummary)
	o.boolOmit("native", h.Native)
	o.strOmit("report", h.Report)
	o.strOmit("reportPath", h.ReportPath)
	o.strOmit("facts", h.Facts)
	o.hash("generationToken", h.GenerationToken)
	o.time("generationDeadline", h.GenerationDeadline)
	o.strOmit("error", h.Error)
	o.boolOmit("stopRequested", h.StopRequested)
	o.boolOmit("stopUnconfirmed", h.StopUnconfirmed)
	if len(h.History) > 0 {
		o.key("history")
		o.b = append(o.b, '[')
		for i := range h.History {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			a := &h.History[i]
			in := object{b: o.b}
			in.intOmit("attempt", int64(a.Attempt))
			in.strOmit("targetSession", string(a.TargetSession))
			in.strOmit("outcome", string(a.Outcome))
			in.strOmit("error", a.Error)
			in.time("endedAt", a.EndedAt)
			o.b, o.bad = in.end(), o.bad || in.bad
		}
		o.b = append(o.b, ']')
	}
	o.time("createdAt", h.CreatedAt)
	o.time("updatedAt", h.UpdatedAt)
	o.uint("seq", h.Seq)
}

func (o *object) session(s *sessionV1) {
	o.str("id", string(s.ID))
	o.str("workspace", string(s.Workspace))
	o.config("config", s.Config)
	o.strOmit("nativeId", s.NativeID)
	o.strOmit("status", string(s.Status))
	o.intOmit("activationOrder", s.ActivationOrder)
	o.time("startedAt", s.StartedAt)
	o.time("endedAt", s.EndedAt)
	o.strOmit("endReason", s.EndReason)
	o.time("createdAt", s.CreatedAt)
	o.int("seq", s.Seq)
	o.strOmit("rankAbove", string(s.RankAbove))
	o.strOmit("rankBelow", string(s.RankBelow))
}

func (o *object) workspace(w *workspaceV1) {
	o.str("id", string(w.ID))
	o.strOmit("name", w.Name)
	o.strOmit("mission", w.Mission)
	o.strOmit("root", w.Root)
	o.config("config", w.Config)
	o.strOmit("currentSession", string(w.CurrentSession))
	o.intOmit("activationCounter", w.ActivationCounter)
	if len(w.Running) > 0 {
		o.key("running")
		o.b = append(o.b, '[')
		for i, id := range w.Running {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			o.b = jsonesc.Append(o.b, string(id))
		}
		o.b = append(o.b, ']')
	}
	o.strOmit("rankHead", string(w.RankHead))
	o.boolOmit("ranked", w.Ranked)
	o.boolOmit("archived", w.Archived)
	o.time("createdAt", w.CreatedAt)
	o.time("updatedAt", w.UpdatedAt)
}

func (o *object) reservation(r *reservationV1) {
	o.str("workspace", string(r.Workspace))
	o.boolOmit("held", r.Held)
	o.strOmit("handoff", string(r.Handoff))
	o.hash("owner", r.Owner)
	o.intOmit("epoch", r.Epoch)
	o.strOmit("leaseHolder", r.LeaseHolder)
	o.time("leaseExpires", r.LeaseExpires)
	o.strOmit("leaseStore", r.LeaseStore)
	o.time("updatedAt", r.UpdatedAt)
}

func (o *object) launch(l *launchV1) {
	o.str("id", string(l.ID))
	o.str("workspace", string(l.Workspace))
	o.strOmit("session", string(l.Session))
	o.strOmit("handoff", string(l.Handoff))
	o.intOmit("attempt", int64(l.Attempt))
	o.strOmit("holder", l.Holder)
	o.strOmit("host", l.Host)
	o.strOmit("engine", l.Engine)
	o.intOmit("epoch", l.Epoch)
	o.strOmit("state", string(l.State))
	o.boolOmit("admitted", l.Admitted)
	o.strOmit("endReason", l.EndReason)
	o.time("createdAt", l.CreatedAt)
	o.time("updatedAt", l.UpdatedAt)
	o.uint("seq", l.Seq)
}
