package host

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/host/internal/wire"
	"github.com/batonhq/baton/internal/ids"
)

// Lock order: Host.mu, then entry.mu, then the runtime's own locks (an
// activity snapshot is taken under entry.mu), then conn.qmu. Emit runs
// under the runtime's locks, so it reads the attachments from an atomic
// snapshot and takes only conn.qmu.

type entryState int

const (
	stOpening entryState = iota // reserved; the runtime is opening it
	stOpen                      // serving commands
	stClosing                   // being parked or closed; still reserved
	stClosed                    // gone
)

// entry is one reserved canonical path and, once open, its session.
type entry struct {
	h    *Host
	id   string
	path string
	gone chan struct{} // closed once the entry is stClosed

	// Set before the entry becomes stOpen, read-only afterwards.
	sess    Session
	release func()          // releases the claim
	notify  <-chan struct{} // the settle subscription, nil without one

	mu        sync.Mutex
	state     entryState
	inflight  int       // host requests in flight for this session
	watching  bool      // a settle watcher runs
	idleSince time.Time // first seen idle and unattached (eviction)

	conns map[*conn]struct{}      // attachments; guarded by Host.mu
	subs  atomic.Pointer[[]*conn] // snapshot of conns for emit
}

func (e *entry) emit(typ string, fields map[string]any) {
	subs := e.subs.Load()
	if subs == nil || len(*subs) == 0 {
		return
	}
	line, err := wire.EventLine(typ, e.id, fields)
	if err != nil {
		e.h.log.Error("runtime event does not encode; dropped", zap.String("sessionId", e.id),
			zap.String("event", typ), zap.Error(err))
		return
	}
	for _, c := range *subs {
		c.enqueue(line)
	}
}

// refreshSubsLocked republishes the attachment snapshot; Host.mu held.
func (e *entry) refreshSubsLocked() {
	subs := slices.Collect(maps.Keys(e.conns))
	e.subs.Store(&subs)
}

// activityLocked reports the session's activity and whether it is busy
// for parking; entry.mu held. Without a snapshot the session counts as
// idle apart from the host's own requests: waiting on a signal that never
// comes would strand it.
func (e *entry) activityLocked() (a engine.Activity, known, busy bool) {
	if s, ok := e.sess.(activitySnapshotter); ok {
		a = s.Activity()
		known = true
	}
	return a, known, busyForParking(a) || e.inflight > 0
}

// activitySnapshotter and settleNotifier are a Session's optional
// capabilities (see Session).
type (
	activitySnapshotter interface{ Activity() engine.Activity }
	settleNotifier      interface{ Settled() <-chan struct{} }
)

// busyForParking reports whether a holds a session from being parked by a
// generation handoff: turns, tools, compaction, queued work. Durable wake
// sources do not count.
func busyForParking(a engine.Activity) bool {
	return a.Turn || a.Tool || a.Compaction || a.Queued > 0
}

// busyForEviction is the broader idle-eviction predicate: wake sources too.
func busyForEviction(a engine.Activity) bool { return busyForParking(a) || a.WakeSources > 0 }

// markClosing moves an open entry to stClosing; it reports whether it did
// (false if someone else is already closing it).
func (e *entry) markClosing() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != stOpen {
		return false
	}
	e.state = stClosing
	return true
}

// open serves open_session for c.
func (h *Host) open(ctx context.Context, c *conn, path, cwd string) (wire.Opened, error) {
	canon, err := canonicalPath(path)
	if err != nil {
		return wire.Opened{}, err
	}
	if cwd != "" && !filepath.IsAbs(cwd) {
		return wire.Opened{}, baton.Errorf(ErrInvalidPath, "cwd %q is not absolute", cwd)
	}
	h.mu.Lock()
	if err := h.stoppedLocked(); err != nil {
		h.mu.Unlock()
		return wire.Opened{}, err
	}
	if e := h.byPath[canon]; e != nil {
		e.mu.Lock()
		st := e.state
		e.mu.Unlock()
		if st == stOpen {
			h.attachLocked(e, c)
			h.mu.Unlock()
			return wire.Opened{SessionID: e.id, SessionPath: canon, Attached: true}, nil
		}
		h.mu.Unlock()
		return wire.Opened{}, pathInUse(h.owner, canon)
	}
	e := &entry{h: h, id: ids.New("ses"), path: canon, gone: make(chan struct{}), conns: map[*conn]struct{}{}}
	h.byPath[canon] = e
	h.mu.Unlock()

	var sess Session
	release, err := h.claims.acquire(canon)
	if err == nil {
		if sess, err = h.rt.Open(ctx, OpenRequest{SessionID: e.id, Path: canon, Cwd: cwd, Emit: e.emit}); err != nil {
			release()
			err = runtimeErr(err)
		}
	}
	if err != nil {
		h.mu.Lock()
		h.forgetLocked(e)
		h.mu.Unlock()
		h.checkDrained()
		return wire.Opened{}, err
	}
	e.sess, e.release = sess, release
	if n, ok := sess.(settleNotifier); ok {
		e.notify = n.Settled()
	}
	h.mu.Lock()
	e.mu.Lock()
	e.state = stOpen
	e.mu.Unlock()
	h.byID[e.id] = e
	stopped := h.stoppedLocked()
	if stopped == nil {
		h.attachLocked(e, c)
	}
	h.mu.Unlock()
	// The drain (or Close) began while the runtime was opening: no one is
	// attached yet, so the session goes at once.
	switch {
	case errors.Is(stopped, ErrClosed):
		if e.markClosing() {
			h.closeEntry(e, wire.ReasonHostShutdown)
		}
		return wire.Opened{}, stopped
	case stopped != nil:
		h.tryPark(e)
		return wire.Opened{}, stopped
	}
	h.log.Debug("session opened", zap.String("sessionId", e.id), zap.String("path", canon))
	return wire.Opened{SessionID: e.id, SessionPath: canon}, nil
}

// forgetLocked drops e's reservation and marks it gone; Host.mu held.
func (h *Host) forgetLocked(e *entry) {
	delete(h.byPath, e.path)
	delete(h.byID, e.id)
	e.mu.Lock()
	e.state = stClosed
	e.mu.Unlock()
	close(e.gone)
}

// attachLocked attaches c to e; Host.mu held.
func (h *Host) attachLocked(e *entry, c *conn) {
	if _, ok := e.conns[c]; ok {
		return
	}
	e.conns[c] = struct{}{}
	c.sessions[e.id] = e
	e.refreshSubsLocked()
}

// detachLocked detaches c from e; Host.mu held. On a draining or closed
// host a connection left holding nothing is closed after it flushes.
func (h *Host) detachLocked(e *entry, c *conn) {
	delete(e.conns, c)
	delete(c.sessions, e.id)
	e.refreshSubsLocked()
	if h.stoppedLocked() != nil && len(c.sessions) == 0 {
		c.closeAfterFlush()
	}
}

// endedLocked is the error of a command for a handle c no longer holds:
// ErrSessionClosed with the terminal record it remembers, or
// ErrUnknownSession; Host.mu held.
func (h *Host) endedLocked(c *conn, sessionID string) error {
	if rec, ok := c.ended[sessionID]; ok {
		return &dataError{err: baton.Errorf(ErrSessionClosed, "%s: %s", sessionID, rec.Reason), data: rec}
	}
	return baton.Errorf(ErrUnknownSession, "%q", sessionID)
}

// closeEntry closes a session the caller moved to stClosing: the runtime
// session first (no event follows), then its claim and reservation, and
// only then the terminal record on each attached connection, so a client
// that reacts to it by reopening elsewhere finds the file free. Draining,
// a connection left holding nothing is closed after it flushes.
func (h *Host) closeEntry(e *entry, reason string) {
	if err := e.sess.Close(h.ctx); err != nil {
		h.log.Error("runtime failed to close session", zap.String("sessionId", e.id),
			zap.String("path", e.path), zap.Error(err))
		reason = wire.ReasonError
	}
	e.release()
	rec := wire.Closed{Type: wire.EventSessionClosed, SessionID: e.id, Reason: reason, SessionPath: e.path}
	line := wire.MustLine(rec)
	h.mu.Lock()
	for c := range e.conns {
		if reason != wire.ReasonClientClose {
			// Remembered so a late command gets the terminal record
			// again, never unknown_session. At most one per session,
			// which ends with it.
			c.ended[e.id] = rec
		}
		c.enqueue(line) // before detachLocked may close c after a flush
		h.detachLocked(e, c)
	}
	if reason == wire.ReasonHandoffParked {
		h.parked++
	}
	h.forgetLocked(e)
	h.mu.Unlock()
	h.log.Debug("session closed", zap.String("sessionId", e.id), zap.String("path", e.path),
		zap.String("reason", reason))
	h.checkDrained()
}

// canonicalPath returns the canonical form of a session path: absolute,
// cleaned, with every symbolic link resolved. For a file that does not
// exist yet, its directory is resolved and the file name kept, so two
// spellings of one future file agree. It returns ErrInvalidPath for an
// empty or relative path, a path with a NUL byte, a path whose directory
// does not exist, or one that cannot be resolved (a symbolic link loop).
// It touches nothing.
func canonicalPath(p string) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", baton.Errorf(ErrInvalidPath, "empty or NUL in %q", p)
	}
	if !filepath.IsAbs(p) {
		return "", baton.Errorf(ErrInvalidPath, "%q is not absolute", p)
	}
	clean := filepath.Clean(p)
	resolved, err := filepath.EvalSymlinks(clean)
	if err == nil {
		return resolved, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", baton.Errorf(ErrInvalidPath, "%q: %v", p, err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(clean))
	if err != nil {
		return "", baton.Errorf(ErrInvalidPath, "directory of %q: %v", p, err)
	}
	return filepath.Join(dir, filepath.Base(clean)), nil
}
