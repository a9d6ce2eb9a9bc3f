package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/host/internal/wire"
	"github.com/batonhq/baton/internal/ids"
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
	byPath     map[string]*entry // every reserved path: opening, open or parking
	conns      map[*conn]struct{}
	nextConn   uint64
	draining   bool
	closed     bool
	superseded []byte // the host_superseded line, once draining
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
	return &Host{rt: rt, opts: o, claims: cl, owner: owner, ctx: ctx, cancel: cancel,
		log:  o.Logger.With(zap.String("instanceId", o.InstanceID), zap.Int("generation", o.Generation)),
		done: make(chan struct{}), byPath: map[string]*entry{}, conns: map[*conn]struct{}{}}, nil
}

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
	if h.ln != nil {
		h.mu.Unlock()
		return errAlreadyServing
	}
	h.ln = ln // closing it twice is harmless
	failed := make(chan error, 1)
	if h.stoppedLocked() != nil {
		_ = ln.Close()
	} else {
		if h.opts.IdleEvict > 0 {
			h.wg.Go(h.evictLoop)
		}
		h.wg.Go(func() { h.acceptLoop(ln, failed) })
	}
	h.mu.Unlock()
	select {
	case <-h.done:
		return h.doneErr
	case <-ctx.Done():
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = h.Close(cctx)
		return ctx.Err()
	case err := <-failed:
		return err
	}
}

var errAlreadyServing = baton.NewError(baton.ErrConflict, "host: already serving")

// acceptLoop accepts until the listener is closed. It returns quietly when
// Drain or Close closed it, and sends the listener's error on failed
// otherwise; a transient failure (out of file descriptors) is retried with
// a bounded back-off.
func (h *Host) acceptLoop(ln net.Listener, failed chan<- error) {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err == nil {
			delay = 0
			h.addConn(nc)
			continue
		}
		h.mu.Lock()
		stopping := h.stoppedLocked() != nil
		h.mu.Unlock()
		if stopping {
			return
		}
		if errors.Is(err, net.ErrClosed) {
			failed <- err // closed under us: nothing more to accept
			return
		}
		// Out of file descriptors and the like: back off, bounded.
		delay = min(max(2*delay, 5*time.Millisecond), time.Second)
		h.log.Warn("accept failed; retrying", zap.Error(err), zap.Duration("delay", delay))
		select {
		case <-time.After(delay):
		case <-h.ctx.Done():
			return
		}
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
	if first && h.ln != nil {
		_ = h.ln.Close()
	}
	entries := h.openLocked()
	h.mu.Unlock()
	if first {
		for _, e := range entries {
			h.closeOpen(e, wire.ReasonHostShutdown, nil)
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

// openLocked lists the reserved sessions (opening, open or parking); the
// caller acts only on those it finds open. Host.mu held.
func (h *Host) openLocked() []*entry { return slices.Collect(maps.Values(h.byPath)) }

// Defaults of Options that tests name; the others are in withDefaults.
const (
	defaultGrace = 600_000 * time.Millisecond
	defaultSweep = 50 * time.Millisecond
)

// errInvalidOptions is what New returns for a bad option; it matches
// baton.ErrInvalid.
var errInvalidOptions = baton.NewError(baton.ErrInvalid, "host: invalid options")

// Options configure a Host. The zero value is usable: every field has a
// default.
type Options struct {
	// Logger receives the host's structured logs; zap.NewNop() if nil.
	Logger *zap.Logger
	// InstanceID names this host process; a fresh random id if empty. It
	// must be a valid baton id (baton.CheckField's rule "id").
	InstanceID string
	// Generation is this host's generation number, 1 if zero; a successor
	// is its predecessor's generation + 1. Negative is invalid.
	Generation int
	// Grace is the drain's soft grace, 600,000 ms (ten minutes) if zero.
	// When it expires the host rescans and logs what still holds it; it
	// never aborts a turn. Negative is invalid.
	Grace time.Duration
	// Sweep is the period of the drain's sweep, which parks the settled
	// sessions of a runtime without a settle subscription (and backs up one
	// that drops a notification): 50 ms if zero. Negative is invalid.
	Sweep time.Duration
	// IdleEvict, when positive, closes a session no connection is
	// attached to once it has been idle that long (checked at least every
	// second), with reason idle_evicted. Idle here is the broader
	// predicate: a durable wake source keeps the session open. Zero never
	// evicts; negative is invalid.
	IdleEvict time.Duration
	// ClaimDir is the directory of cross-generation path claims, shared by
	// every generation (and every host) that may open the same session
	// files; it must be absolute and is created if missing. Empty keeps
	// reservations within this process only.
	ClaimDir string
	// MaxLineBytes bounds one command line, 1 MiB if zero; a longer line
	// is answered invalid_command and its connection closed.
	MaxLineBytes int
	// WriteTimeout bounds one write to a connection, 10 s if zero: a
	// client that stops reading for that long is disconnected.
	WriteTimeout time.Duration
	// MaxQueuedRecords bounds the records waiting for one slow
	// connection, 65,536 if zero; one that falls further behind is
	// disconnected.
	MaxQueuedRecords int

	// clock drives the grace and the sweep; tests in this package set it.
	clock clock.Clock
}

// withDefaults validates o and fills its defaults. It returns an
// errInvalidOptions error and changes nothing for an out-of-range field.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.Generation < 0:
		return o, baton.Errorf(errInvalidOptions, "generation %d is negative", o.Generation)
	case o.Grace < 0:
		return o, baton.Errorf(errInvalidOptions, "grace %v is negative", o.Grace)
	case o.Sweep < 0:
		return o, baton.Errorf(errInvalidOptions, "sweep %v is negative", o.Sweep)
	case o.IdleEvict < 0:
		return o, baton.Errorf(errInvalidOptions, "idle eviction %v is negative", o.IdleEvict)
	case o.MaxLineBytes < 0, o.MaxQueuedRecords < 0, o.WriteTimeout < 0:
		return o, baton.Errorf(errInvalidOptions, "negative limit")
	case o.InstanceID != "" && baton.CheckField("id", o.InstanceID) != nil:
		return o, baton.Errorf(errInvalidOptions, "instance id %q", o.InstanceID)
	}
	if o.InstanceID == "" {
		o.InstanceID = ids.New("host")
	}
	o.Logger = cmp.Or(o.Logger, zap.NewNop())
	o.clock = cmp.Or[clock.Clock](o.clock, clock.Real{})
	o.Generation = cmp.Or(o.Generation, 1)
	o.Grace = cmp.Or(o.Grace, defaultGrace)
	o.Sweep = cmp.Or(o.Sweep, defaultSweep)
	o.MaxLineBytes = cmp.Or(o.MaxLineBytes, wire.MaxLineBytes)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, 10*time.Second)
	o.MaxQueuedRecords = cmp.Or(o.MaxQueuedRecords, 1<<16)
	return o, nil
}

// Errors of the protocol. Each maps to one stable wire code (in
// parentheses), and a Client turns a failed response back into the same
// sentinel, so errors.Is(err, ErrPathInUse) holds on both sides of the
// socket. Each is also matched by its code-level sentinel (baton.ErrInvalid,
// ...).
var (
	// errInvalidCommand and errInvalidPath are matched by baton.ErrInvalid
	// on both sides, errUnknownSession by baton.ErrNotFound.
	//
	// errInvalidCommand: a line that is not a JSON object or is over the
	// line limit, a command with no type, an unknown type, or a missing
	// field (invalid_command).
	errInvalidCommand = baton.NewError(baton.ErrInvalid, "host: invalid command")
	// errInvalidPath: a session path (or cwd) that is not absolute, or
	// whose directory does not exist (invalid_path).
	errInvalidPath = baton.NewError(baton.ErrInvalid, "host: invalid session path")
	// errUnknownSession: a session handle this host never gave the
	// connection; a handle parked by a handoff never answers it
	// (unknown_session).
	errUnknownSession = baton.NewError(baton.ErrNotFound, "host: unknown session")
	// ErrPathInUse: the canonical path is reserved by a session that is
	// closing, or claimed by another live host generation. Its ErrorData is
	// {owner: {pid, instanceId, generation}, retry_after_ms: 2000}
	// (session_path_in_use).
	ErrPathInUse = baton.NewError(baton.ErrBusy, "host: session path in use")
	// ErrDraining: open_session on a host that is handing over to its
	// successor (host_draining).
	ErrDraining = baton.NewError(baton.ErrUnavailable, "host: host is draining")
	// ErrSessionClosed: a command for a handle whose session was parked or
	// closed; the session_closed record precedes it on the wire and is its
	// ErrorData (session_closed).
	ErrSessionClosed = baton.NewError(baton.ErrConflict, "host: session closed")
	// ErrRuntime: the runtime failed to open a session or to serve a
	// command (runtime_error).
	ErrRuntime = baton.NewError(baton.ErrUnavailable, "host: runtime failed")
	// ErrClosed: the host was closed, or a Client's connection ended before
	// the response arrived (host_closed).
	ErrClosed = baton.NewError(baton.ErrUnavailable, "host: closed")
	// errRemote is the base of a failed response whose code this package
	// does not know (a newer host), and of an undecodable one.
	errRemote = baton.NewError(baton.ErrInternal, "host: remote error")
)

// codeInternal is the wire code of an error no sentinel matches.
const codeInternal = "internal_error"

// wireCodes are the stable "error" strings of a failed response.
var wireCodes = []struct {
	err  *baton.Error
	code string
}{
	{errInvalidCommand, "invalid_command"},
	{errInvalidPath, "invalid_path"},
	{errUnknownSession, "unknown_session"},
	{ErrPathInUse, "session_path_in_use"},
	{ErrDraining, "host_draining"},
	{ErrSessionClosed, "session_closed"},
	{ErrRuntime, "runtime_error"},
	{ErrClosed, "host_closed"},
}

// codeOf returns the wire code of err: that of the first sentinel of this
// package in its chain, "" for nil, internal_error otherwise.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	for _, w := range wireCodes {
		if errors.Is(err, w.err) {
			return w.code
		}
	}
	return codeInternal
}

// dataError carries a failed response's errorData, as JSON, next to its
// sentinel.
type dataError struct {
	err  error
	data json.RawMessage
}

func (e *dataError) Error() string { return e.err.Error() }
func (e *dataError) Unwrap() error { return e.err }

// ErrorData returns the errorData of a failed response, as JSON: for
// ErrPathInUse the holder and retry_after_ms, for ErrSessionClosed the
// session_closed record. It returns nil when err carries none.
func ErrorData(err error) json.RawMessage {
	if d, ok := errors.AsType[*dataError](err); ok {
		return d.data
	}
	return nil
}

// remoteErr is the error of a failed response a Client received.
func remoteErr(r received) error {
	sentinel := errRemote
	for _, w := range wireCodes {
		if w.code == r.Error {
			sentinel = w.err
		}
	}
	err := baton.Errorf(sentinel, "%s failed: %s", r.Command, r.Error)
	if len(r.ErrorData) == 0 {
		return err
	}
	return &dataError{err: err, data: r.ErrorData}
}

// runtimeErr classifies a runtime's failure: one that wraps a sentinel of
// this package keeps it, any other becomes ErrRuntime.
func runtimeErr(err error) error {
	if codeOf(err) == codeInternal {
		return baton.Errorf(ErrRuntime, "%v", err)
	}
	return err
}

func pathInUse(owner wire.Owner, path string) error {
	data, _ := json.Marshal(wire.PathInUse{Owner: owner, RetryAfterMS: wire.RetryAfterMS}) // plain fields: it encodes
	return &dataError{
		err:  baton.Errorf(ErrPathInUse, "%s is held by pid %d (%s, generation %d)", path, owner.PID, owner.InstanceID, owner.Generation),
		data: data,
	}
}
