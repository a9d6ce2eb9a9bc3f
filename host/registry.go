package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	stClosing                   // being parked or closed, or gone once forgotten
)

// entry is one reserved canonical path and, once open, its session.
type entry struct {
	h    *Host
	id   string
	path string
	gone chan struct{} // closed once the entry is forgotten (no longer reserved)

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
	if s, ok := e.sess.(interface{ Activity() engine.Activity }); ok {
		a = s.Activity()
		known = true
	}
	return a, known, busyForParking(a) || e.inflight > 0
}

// busyForParking reports whether a holds a session from being parked by a
// generation handoff: turns, tools, compaction, queued work. Durable wake
// sources do not count.
func busyForParking(a engine.Activity) bool {
	return a.Turn || a.Tool || a.Compaction || a.Queued > 0
}

// busyForEviction is the broader idle-eviction predicate: wake sources too.
func busyForEviction(a engine.Activity) bool { return busyForParking(a) || a.WakeSources > 0 }

// closeOpen closes e with reason (see closeEntry) if it is open and ready,
// called under Host.mu and entry.mu, allows it (a nil ready always does):
// no connection can attach between the check and the close. It reports
// whether it did: false if someone else is already closing it, say.
func (h *Host) closeOpen(e *entry, reason string, ready func() bool) bool {
	h.mu.Lock()
	e.mu.Lock()
	closing := e.state == stOpen && (ready == nil || ready())
	if closing {
		e.state = stClosing
	}
	e.mu.Unlock()
	h.mu.Unlock()
	if closing {
		h.closeEntry(e, reason)
	}
	return closing
}

// open serves open_session for c.
func (h *Host) open(ctx context.Context, c *conn, path, cwd string) (wire.Opened, error) {
	canon, err := canonicalPath(path)
	if err != nil {
		return wire.Opened{}, err
	}
	if cwd != "" && !filepath.IsAbs(cwd) {
		return wire.Opened{}, baton.Errorf(errInvalidPath, "cwd %q is not absolute", cwd)
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
	if n, ok := sess.(interface{ Settled() <-chan struct{} }); ok {
		e.notify = n.Settled()
	}
	h.mu.Lock()
	e.mu.Lock()
	e.state = stOpen
	e.mu.Unlock()
	stopped := h.stoppedLocked()
	if stopped == nil {
		h.attachLocked(e, c)
	}
	h.mu.Unlock()
	if stopped != nil {
		// The drain (or Close) began while the runtime was opening: no one
		// is attached yet, so the session goes at once.
		if errors.Is(stopped, ErrClosed) {
			h.closeOpen(e, wire.ReasonHostShutdown, nil)
		} else {
			h.tryPark(e)
		}
		return wire.Opened{}, stopped
	}
	h.log.Debug("session opened", zap.String("sessionId", e.id), zap.String("path", canon))
	return wire.Opened{SessionID: e.id, SessionPath: canon}, nil
}

// forgetLocked drops e's reservation and marks it gone; Host.mu held. Its
// state stays as it was, stOpening or stClosing: nothing opens it again.
func (h *Host) forgetLocked(e *entry) {
	delete(h.byPath, e.path)
	close(e.gone)
}

// attachLocked attaches c to e; Host.mu held.
func (h *Host) attachLocked(e *entry, c *conn) {
	e.conns[c] = struct{}{} // again for a second open on c: no change
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
// errUnknownSession; Host.mu held.
func (h *Host) endedLocked(c *conn, sessionID string) error {
	if rec, ok := c.ended[sessionID]; ok {
		data, _ := json.Marshal(rec) // plain fields: it encodes
		return &dataError{err: baton.Errorf(ErrSessionClosed, "%s: %s", sessionID, rec.Reason), data: data}
	}
	return baton.Errorf(errUnknownSession, "%q", sessionID)
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
// spellings of one future file agree. It returns errInvalidPath for an
// empty or relative path, a path with a NUL byte, a path whose directory
// does not exist, or one that cannot be resolved (a symbolic link loop).
// It touches nothing.
func canonicalPath(p string) (string, error) {
	if p == "" || strings.IndexByte(p, 0) >= 0 {
		return "", baton.Errorf(errInvalidPath, "empty or NUL in %q", p)
	}
	if !filepath.IsAbs(p) {
		return "", baton.Errorf(errInvalidPath, "%q is not absolute", p)
	}
	clean := filepath.Clean(p)
	resolved, err := filepath.EvalSymlinks(clean)
	if err == nil {
		return resolved, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", baton.Errorf(errInvalidPath, "%q: %v", p, err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(clean))
	if err != nil {
		return "", baton.Errorf(errInvalidPath, "directory of %q: %v", p, err)
	}
	return filepath.Join(dir, filepath.Base(clean)), nil
}

// claims are the cross-generation reservations of canonical session paths:
// one file per path in a directory every generation of a host shares. A
// claim is held by an exclusive flock(2) on its file, so it stands exactly
// as long as its owner process lives: the kernel drops the lock when the
// process dies, however it dies, and a reused pid can never revive it. The
// file's content names the owner for session_path_in_use.
//
// Claim files are kept after release, one small file per path ever
// opened: freeing a file's blocks costs a journal transaction on common
// file systems (about 0.2 ms here), which would dominate a drain that
// parks a thousand sessions, while closing a kept file costs microseconds.
// Removing the directory while no host runs is safe.
type claims struct {
	dir   string // "" disables cross-process claims
	owner wire.Owner
}

// claimRecord is the content of a claim file.
type claimRecord struct {
	Owner wire.Owner `json:"owner"`
	Path  string     `json:"path"`
}

func newClaims(dir string, owner wire.Owner) (*claims, error) {
	if dir == "" {
		return &claims{owner: owner}, nil
	}
	if !filepath.IsAbs(dir) {
		return nil, baton.Errorf(errInvalidOptions, "claim directory %q is not absolute", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, baton.Errorf(errInvalidOptions, "claim directory: %v", err)
	}
	return &claims{dir: dir, owner: owner}, nil
}

// acquire claims path for this owner and returns what releases the claim:
// closing its file drops the lock, and the file and its (now stale) record
// stay. It returns ErrPathInUse (with the
// holder as errorData) when another live process holds it, or an
// ErrRuntime error when the claim file cannot be used.
func (c *claims) acquire(path string) (release func(), err error) {
	if c.dir == "" {
		return func() {}, nil
	}
	sum := sha256.Sum256([]byte(path))
	name := filepath.Join(c.dir, hex.EncodeToString(sum[:20])+".claim")
	// Claim files are never unlinked by a host, but someone may clear the
	// directory: a lock on a file no longer at its name is worthless, so
	// retry on the new one. Bounded, since each retry needs another unlink.
	for range 16 {
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, baton.Errorf(ErrRuntime, "open claim for %s: %v", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			owner := readClaimOwner(f)
			_ = f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, pathInUse(owner, path)
			}
			return nil, baton.Errorf(ErrRuntime, "lock claim for %s: %v", path, err)
		}
		if !sameFile(f, name) {
			_ = f.Close()
			continue
		}
		if err := writeClaimRecord(f, claimRecord{Owner: c.owner, Path: path}); err != nil {
			_ = f.Close()
			return nil, baton.Errorf(ErrRuntime, "write claim for %s: %v", path, err)
		}
		return func() { _ = f.Close() }, nil
	}
	return nil, baton.Errorf(ErrRuntime, "claim for %s kept changing", path)
}

// writeClaimRecord overwrites the record in place, padded with spaces to
// the file's size, so the file never shrinks and no block is freed.
func writeClaimRecord(f *os.File, rec claimRecord) error {
	b := wire.MustLine(rec)
	if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(b)) {
		b = append(b, bytes.Repeat([]byte(" "), int(fi.Size())-len(b))...)
	}
	_, err := f.WriteAt(b, 0)
	return err
}

func sameFile(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

// readClaimOwner reads the owner a held claim names. A new holder writes
// its record right after locking, so a contender may still read the
// previous holder's record: one whose process is gone (kill(pid, 0) fails
// with ESRCH) cannot be the holder and is reported as unknown (zero), as
// is an empty or unreadable record.
func readClaimOwner(f *os.File) wire.Owner {
	var rec claimRecord
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 64<<10))
	if err != nil || json.Unmarshal(b, &rec) != nil || rec.Owner.PID <= 0 ||
		errors.Is(syscall.Kill(rec.Owner.PID, 0), syscall.ESRCH) {
		return wire.Owner{}
	}
	return rec.Owner
}
