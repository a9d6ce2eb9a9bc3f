package host

import "context"

// Runtime is the seam a Host drives: it opens agent sessions stored at
// canonical paths. The host owns reservations, attachments and the
// generation handoff; the runtime owns what a session does.
type Runtime interface {
	// Open opens (or resumes) the session stored at req.Path, which the
	// host has already canonicalised and reserved: no other session of
	// this host, and no other live generation sharing its claim
	// directory, holds it until the host closes the returned Session.
	// Errors reach the client as runtime_error unless they wrap a
	// sentinel of this package.
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
	// Emit delivers one session event, of type typ (agent_start,
	// agent_settled, message, or the runtime's own), to every connection
	// attached to the session, as one flat JSON object: fields must be
	// JSON-encodable, and their keys "type", "sessionId" and "id" are the
	// host's. The runtime must call Emit serially (never from two
	// goroutines at once for one session), must have emitted every event
	// of a turn before its activity snapshot reports the turn settled, and
	// must never call it once Close has returned. Emit does not block on
	// the network and takes no lock the host holds while calling the
	// session, so the runtime may call it under its own lock.
	Emit func(typ string, fields map[string]any)
}

// Session is one open agent session.
//
// Optional capabilities are found by type assertion on the Session: a
// method Activity() engine.Activity (what the session is doing, read under
// no host-visible lock) and a method Settled() <-chan struct{} (a channel
// that receives a value each time the session becomes idle). Without a snapshot the host treats the session as idle
// apart from its own in-flight requests; without a settle subscription it
// finds settled sessions by a periodic sweep.
type Session interface {
	// Prompt hands the session a prompt and returns once the runtime
	// accepted it (a turn started, or the prompt was queued), not when the
	// turn ends. The host holds the session (no park) while it runs.
	// Errors reach the client as runtime_error unless they wrap a
	// sentinel of this package (ErrSessionClosed after Close, say).
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
