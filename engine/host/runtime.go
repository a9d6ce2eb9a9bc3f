package host

import (
	"bytes"
	"context"
	"maps"
)

// Runtime is the seam a Host drives: it opens agent sessions stored at
// canonical paths. The host owns reservations, attachments and the
// generation handoff; the runtime owns what a session does.
type Runtime interface {
	// Open opens (or resumes) the session stored at req.Path, which the
	// host has already canonicalised and reserved: no other session of
	// this host, and no other live generation sharing its claim
	// directory, holds it until the host closes the returned Session.
	// Errors are reported to the client as runtime_error unless they wrap
	// a sentinel of this package.
	Open(ctx context.Context, req OpenRequest) (Session, error)
}

// OpenRequest asks a Runtime to open one session.
type OpenRequest struct {
	// SessionID is the handle the host gave the session.
	SessionID string
	// Path is the canonical absolute path of the session file.
	Path string
	// Cwd is the working directory the client asked for; "" if none.
	Cwd string
	// Emit delivers one session event to every connection attached to
	// the session. The runtime must call it serially (never from two
	// goroutines at once for one session), must have emitted every event
	// of a turn before its activity snapshot reports the turn settled,
	// and must never call it once Close has returned. Emit does not block
	// on the network and takes no lock the host holds while calling the
	// session, so the runtime may call it under its own lock.
	Emit func(Event)
}

// Session is one open agent session.
//
// Optional capabilities are found by type assertion on the Session:
// engine.ActivitySnapshotter (what the session is doing, read under no
// host-visible lock) and engine.SettleNotifier (a value each time it
// becomes idle). Without a snapshot the host treats the session as idle
// apart from its own in-flight requests; without a settle subscription it
// finds settled sessions by a periodic sweep.
type Session interface {
	// Prompt hands the session a prompt and returns once the runtime
	// accepted it (a turn started, or the prompt was queued), not when the
	// turn ends. The host holds the session (no park) while it runs.
	// Errors reach the client as runtime_error unless they wrap a
	// sentinel of this package (ErrSessionClosed after Close, say), or as
	// ctx's error when the client left.
	Prompt(ctx context.Context, text string) error
	// Abort ends the running turn, if any; errors as Prompt.
	Abort(ctx context.Context) error
	// State returns a JSON-encodable view of the session for get_state;
	// errors as Prompt.
	State(ctx context.Context) (any, error)
	// Close ends the session and releases its files. A host closes a
	// session only when it is settled, except on Host.Close or a
	// client's close_session. After Close returns, Emit is never called
	// again. The host calls Close exactly once.
	Close(ctx context.Context) error
}

// Event is one session event as the runtime emits it. The host adds the
// session's id; Fields must be JSON-encodable and may not use the keys
// "type", "sessionId" or "id" (they are overwritten).
type Event struct {
	Type   string
	Fields map[string]any
}

// MarshalJSON encodes the event as one flat object with its type.
func (e Event) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(e.Fields)+1)
	maps.Copy(m, e.Fields)
	delete(m, "id")
	delete(m, "sessionId")
	m["type"] = e.Type
	return marshalFlat(m)
}

// wireEvent is an Event with the session handle the host gave it.
type wireEvent struct {
	ev        Event
	sessionID string
}

func (w wireEvent) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(w.ev.Fields)+2)
	maps.Copy(m, w.ev.Fields)
	delete(m, "id")
	m["type"] = w.ev.Type
	m["sessionId"] = w.sessionID
	return marshalFlat(m)
}

// marshalFlat encodes m without escaping HTML, as MarshalLine does.
func marshalFlat(m map[string]any) ([]byte, error) {
	b, err := MarshalLine(m)
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}
