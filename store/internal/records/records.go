// Package records copies baton's store records as a backend keeps them:
// with slices of their own, so that neither the caller nor the backend can
// change the other's copy, and with every time normalized by the
// backend's rule (UTC, or PostgreSQL's microseconds).
package records

import (
	"slices"
	"time"

	"github.com/batonhq/baton/store"
)

// Norm is how a backend keeps a time.
type Norm func(time.Time) time.Time

// UTC drops the location and the monotonic clock reading, as a durable
// backend does; the zero time stays the zero time.
func UTC(t time.Time) time.Time { return t.UTC() }

// Micro is UTC truncated to the microsecond, as PostgreSQL keeps a time.
func Micro(t time.Time) time.Time { return t.Truncate(time.Microsecond).UTC() }

// Workspace returns w as stored.
func Workspace(w store.Workspace, n Norm) store.Workspace {
	w.Running = Clone(w.Running)
	w.CreatedAt, w.UpdatedAt = n(w.CreatedAt), n(w.UpdatedAt)
	return w
}

// Session returns s as stored.
func Session(s store.Session, n Norm) store.Session {
	s.StartedAt, s.EndedAt, s.CreatedAt = n(s.StartedAt), n(s.EndedAt), n(s.CreatedAt)
	return s
}

// Handoff returns h as stored.
func Handoff(h store.Handoff, n Norm) store.Handoff {
	h.GenerationDeadline, h.CreatedAt, h.UpdatedAt = n(h.GenerationDeadline), n(h.CreatedAt), n(h.UpdatedAt)
	h.History = Clone(h.History)
	for i := range h.History {
		h.History[i].EndedAt = n(h.History[i].EndedAt)
	}
	return h
}

// Reservation returns r as stored.
func Reservation(r store.Reservation, n Norm) store.Reservation {
	r.LeaseExpires, r.UpdatedAt = n(r.LeaseExpires), n(r.UpdatedAt)
	return r
}

// Wakeup returns w as stored.
func Wakeup(w store.Wakeup, n Norm) store.Wakeup {
	w.At, w.CreatedAt, w.UpdatedAt = n(w.At), n(w.CreatedAt), n(w.UpdatedAt)
	return w
}

// Continuation returns c as stored.
func Continuation(c store.Continuation, n Norm) store.Continuation {
	c.CreatedAt, c.UpdatedAt = n(c.CreatedAt), n(c.UpdatedAt)
	return c
}

// Launch returns l as stored.
func Launch(l store.Launch, n Norm) store.Launch {
	l.CreatedAt, l.UpdatedAt = n(l.CreatedAt), n(l.UpdatedAt)
	return l
}

// Instruction returns i as stored.
func Instruction(i store.Instruction, n Norm) store.Instruction {
	i.CreatedAt, i.UpdatedAt = n(i.CreatedAt), n(i.UpdatedAt)
	return i
}

// Clone copies s, nil when empty (as JSON decodes an omitted list).
func Clone[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
