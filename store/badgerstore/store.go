package badgerstore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/notify"
)

// pkg prefixes this package's error messages.
const pkg = "badgerstore"

// Errors of this package, besides the store sentinels.
var (
	// ErrLocked: another open Store (in this process or another) holds the
	// directory.
	ErrLocked = baton.NewError(baton.ErrBusy, "badgerstore: directory in use by another store")
	// ErrStorage: badger failed to read or write (I/O, a transaction over
	// badger's size limit), or a stored value does not decode. The
	// error also unwraps to badger's own error where there is one.
	ErrStorage = baton.NewError(baton.ErrInternal, "badgerstore: storage failure")
	// ErrCannotPersist: the store can no longer make a commit durable:
	// its directory was removed or replaced (badger keeps writing to its
	// open files, which no path reaches any more), is no longer writable,
	// has less free space than Options.MinFreeBytes, or badger failed to
	// write, flush or sync. From the first such fault on, every Update and
	// View returns it (nothing more is acknowledged) and Health reports
	// it. It is not worth retrying on this Store: close it, fix the
	// directory (or free space), and open it again; what was acknowledged
	// before the fault is still there, unless the directory itself was
	// removed. It matches baton.ErrUnavailable.
	ErrCannotPersist = baton.NewError(baton.ErrUnavailable, "badgerstore: the directory can no longer persist")
)

// Store is a store.Store in one badger directory. It is safe for concurrent
// use. Open one Store per directory and process.
type Store struct {
	db         *badger.DB
	lock       *dirLock
	log        *zap.Logger
	maxRetries int
	// incarnation is minted by Open (see Incarnation).
	incarnation string
	subs        notify.Hub
	// gs is the group commit of a synced store; nil with per-commit
	// fsync or NoSync.
	gs *groupSync
	// cache keeps decoded records by key and version.
	cache *recordCache
	// health watches the directory (see ErrCannotPersist).
	health *health

	mu     sync.Mutex
	active sync.WaitGroup // transactions running (begin to end)
	closed bool
}

var (
	_ store.Store    = (*Store)(nil)
	_ store.Notifier = (*Store)(nil)
)

// Open opens (creating it if needed) the store in dir, which is locked
// until Close. A new directory gets the format marker of this version; an
// existing one must carry it.
//
// Errors: baton.ErrInvalid for an empty dir; ErrLocked if another Store
// holds dir; store.ErrFormat if dir holds a database this package did not write,
// or another format; ErrStorage,
// or an error of the file system, if badger cannot open it.
func Open(dir string, opts Options) (_ *Store, err error) {
	if dir == "" {
		return nil, baton.Errorf(baton.ErrInvalid, "badgerstore: Open: empty directory")
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("badgerstore: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = lock.release()
		}
	}()
	hl, err := newHealth(dir, opts.minFree())
	if err != nil {
		return nil, err
	}
	if err := dropEmptyMemtables(dir); err != nil {
		return nil, storageErr("open "+dir, err)
	}
	group := opts.groupCommit()
	db, err := badger.Open(opts.badgerOptions(dir, log, group).WithLogger(newBadgerLogger(log, hl)))
	if err == nil && group && !checkLayout(dir) {
		// Not the log files a sync round knows how to cover: fall back
		// to badger's per-commit fsync.
		log.Warn("badgerstore: unexpected badger file layout, group commit disabled", zap.String("dir", dir))
		group = false
		if err = db.Close(); err == nil {
			db, err = badger.Open(opts.badgerOptions(dir, log, false).WithLogger(newBadgerLogger(log, hl)))
		}
	}
	if err != nil {
		return nil, storageErr("open "+dir, err)
	}
	if err := checkFormat(db); err != nil {
		_ = db.Close()
		return nil, err
	}
	s := &Store{db: db, lock: lock, log: log, maxRetries: backend.Retries(opts.MaxConflictRetries), incarnation: rand.Text(),
		cache: newRecordCache(opts.cachePerShard()), health: hl}
	if group {
		s.gs = newGroupSync(dir, opts.valueThreshold(), hl)
	}
	return s, nil
}

// closeGrace bounds how long Close waits for badger to close once the
// store cannot persist (see Close).
const closeGrace = 10 * time.Second

// closeDB closes badger, without waiting past closeGrace for a store that
// cannot persist.
func (s *Store) closeDB() error {
	if s.health.failed() == nil {
		return s.db.Close()
	}
	done := make(chan error, 1)
	go func() { done <- s.db.Close() }()
	grace := closeGrace
	if s.health.gone() {
		grace = 0
	}
	select {
	case err := <-done:
		return err
	case <-time.After(grace):
		s.log.Error("badgerstore: badger did not close: its memtable cannot be flushed", zap.Error(s.health.failed()))
		return fmt.Errorf("%w: close: badger could not flush its memtable", ErrCannotPersist)
	}
}

// dropEmptyMemtables removes the empty (0-byte) memtable and value logs a
// crash can leave between the creation of such a file and its sizing:
// they hold no entry (nothing can point into them), and badger v4 refuses
// to open a directory with one (z.NewFile, badger issue #2207). Files with
// content are left alone.
func dropEmptyMemtables(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); e.IsDir() || (ext != ".mem" && ext != ".vlog") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if info.Size() == 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFormat writes the format marker into an empty database, and refuses
// a database with another marker or with data but no marker.
func checkFormat(db *badger.DB) error {
	return db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(formatKey)
		if err == nil {
			v, err := item.ValueCopy(nil)
			if err != nil {
				return storageErr("read format", err)
			}
			if string(v) != formatVersion {
				return fmt.Errorf("%w: format %q, this version reads %q", store.ErrFormat, v, formatVersion)
			}
			return nil
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return storageErr("read format", err)
		}
		it := txn.NewIterator(badger.IteratorOptions{})
		it.Rewind()
		empty := !it.Valid()
		it.Close()
		if !empty {
			return fmt.Errorf("%w: a badger database without baton's format marker", store.ErrFormat)
		}
		return txn.Set(formatKey, []byte(formatVersion))
	})
}

// begin registers a running transaction of op (Update or View), which
// ends with s.active.Done(); it fails for a nil fn and after Close.
func (s *Store) begin(op string, fn func(store.Tx) error) error {
	if fn == nil {
		return baton.Errorf(baton.ErrInvalid, "badgerstore: %s: nil function", op)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.active.Add(1)
	return nil
}

// Update runs fn in a read-write badger transaction and commits if fn
// returns nil. Transactions are serializable: badger checks at commit that
// no key fn read (records, uniqueness keys, list guards; see the package
// documentation) was written by a transaction that committed since fn's
// snapshot. If one was, the commit is refused and fn runs again from
// scratch on a fresh snapshot, after a short randomized pause, at most
// Options.MaxConflictRetries more times. fn must therefore have no effect
// outside the transaction. If fn returns an error or panics, nothing it
// wrote is kept; its error is returned as is (a panic goes on).
//
// Unless Options.NoSync, Update returns nil only once the commit is fsynced
// (with group commit: once a sync round that started after the commit has
// ended; an Update whose snapshot may show a commit not yet synced also
// waits for that commit's round before it returns, whatever it returns).
// The wait for a sync does not watch ctx: the commit is already visible.
// The Tx carries ctx: once ctx is done, its methods return an error
// wrapping ctx.Err().
//
// fn must not keep the Tx (afterwards every method returns store.ErrTxDone) nor
// share it between goroutines. It may call Update or View on the same Store
// (they are other transactions), but must not call Close: Close waits for
// fn.
//
// Errors: baton.ErrInvalid for a nil fn; store.ErrClosed after Close; an
// error wrapping ctx.Err() if ctx is done before a try (fn is not called
// again); store.ErrTxConflict when the conflict retries are exhausted (safe
// to retry the whole Update); ErrStorage if badger fails to commit, if a
// group commit sync fails (the commit may be visible but is not known to
// be durable: from then on every Update and View returns that error; close
// the store and open it again; the error also matches ErrCannotPersist),
// or if a write inside fn failed with ErrStorage (a half-done write is never
// committed, even when fn ignores its error and returns nil);
// ErrCannotPersist once the store cannot persist (see ErrCannotPersist:
// not worth retrying on this Store); otherwise fn's error, as is.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.begin("Update", fn); err != nil {
		return err
	}
	defer s.active.Done()
	for try := 0; ; try++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("badgerstore: update: %w", err)
		}
		conflict, grown, err := s.run(ctx, fn, true)
		if !conflict {
			if err == nil {
				s.subs.Notify(grown)
			}
			return err
		}
		if try >= s.maxRetries {
			return baton.Errorf(store.ErrTxConflict, "badgerstore: update: conflicting commit after %d tries", try+1)
		}
		s.log.Debug("badgerstore: serialization conflict, retrying", zap.Int("try", try+1))
		// Up to 100µs·2^try, capped at 10ms.
		if err := backend.Pause(ctx, min(100*time.Microsecond<<min(try, 7), 10*time.Millisecond)); err != nil {
			return fmt.Errorf("badgerstore: update: %w", err)
		}
	}
}

// View runs fn in a read-only badger transaction: a consistent snapshot,
// never blocked by Updates and never retried. Every write method of the Tx
// returns an error matching baton.ErrInternal and changes nothing; once ctx is done, every
// method returns an error wrapping ctx.Err(). With group commit, a View
// whose snapshot may show a commit whose sync has not ended waits for it
// before it returns, so that its caller never acts on a commit that is
// not durable; fn itself must not act outside the store on what it reads.
//
// fn must not keep the Tx (afterwards every method returns store.ErrTxDone) nor
// call Close.
//
// Errors: baton.ErrInvalid for a nil fn; store.ErrClosed after Close; an
// error wrapping ctx.Err() if ctx is done before fn starts (fn is not
// called); ErrStorage once a group commit sync failed (see Update);
// otherwise fn's error, as is.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := s.begin("View", fn); err != nil {
		return err
	}
	defer s.active.Done()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("badgerstore: view: %w", err)
	}
	_, _, err := s.run(ctx, fn, false)
	return err
}

// run is one try of fn. conflict reports that the commit lost a
// serialization race (err is then nil); grown are the workspaces whose
// change feed the commit appended to.
func (s *Store) run(ctx context.Context, fn func(store.Tx) error, update bool) (conflict bool, grown []baton.WorkspaceID, err error) {
	if err := s.health.failed(); err != nil {
		return false, nil, err
	}
	txn := s.db.NewTransaction(update)
	t := &tx{txn: txn, ctx: ctx, update: update, cache: s.cache}
	defer func() {
		t.done = true
		txn.Discard() // no iterator is open: tx methods close theirs
	}()
	// With group commit, the snapshot may show commits whose covering
	// sync has not finished: whatever this try returns, it returns only
	// once the keys it read are durable (a commit of its own waits for a
	// later round, which covers every commit its snapshot showed).
	if s.gs != nil {
		t.track = true
		t.reads = t.readBuf[:0]
		if update {
			t.writes = t.writeBuf[:0]
		}
		t.threshold = s.gs.threshold
	}
	if err = fn(t); err == nil {
		// A View writes nothing: nothing broken, no change, no commit.
		err = t.broken
	}
	t.done = true
	if err == nil {
		grown, err = t.flushChanges()
	}
	if err == nil && t.wrote {
		if conflict, err = s.commit(t); conflict || err != nil {
			return conflict, nil, err
		}
	}
	if s.gs != nil {
		// After a commit of its own, the round that covered it started
		// after everything its snapshot showed was in badger's logs;
		// settling the keys read also waits for the commits it read that
		// are still being synced (the value log, say, which a round syncs
		// only once they count themselves).
		if serr := s.gs.settle(t.reads); serr != nil {
			return false, nil, serr
		}
	}
	if err != nil {
		return false, nil, err
	}
	t.cacheWritten()
	return false, grown, nil
}

// commit commits t, which wrote something; conflict reports a lost
// serialization race (err is then nil).
func (s *Store) commit(t *tx) (conflict bool, err error) {
	if s.gs != nil {
		conflict, err := s.gs.commit(t.txn, t.writes, t.bigValue)
		if err != nil {
			return false, s.health.fail(err)
		}
		return conflict, nil
	}
	switch err := t.txn.Commit(); {
	case errors.Is(err, badger.ErrConflict):
		return true, nil
	case err != nil:
		return false, s.health.fail(storageErr("commit", err))
	}
	// Visible, and synced if SyncWrites: acknowledged only while the
	// directory can still persist it.
	return false, s.health.check()
}

// Subscribe returns a channel that receives a value after each committed
// Update that appends changes to ws (ws == "": to any workspace), once
// the commit is as durable as Options.NoSync promises and visible to
// every new transaction. Notifications are coalesced (the channel holds
// at most one) and a committer never waits for a reader. They are in
// process only: one process holds the directory. Close wakes every
// subscriber once (what it reads next is store.ErrClosed). cancel ends the
// subscription; it is idempotent and never closes ch.
func (s *Store) Subscribe(ws baton.WorkspaceID) (ch <-chan struct{}, cancel func()) {
	return s.subs.Subscribe(ws)
}

// Health returns nil while the store can persist its commits, and
// otherwise the error every Update and View returns from then on
// (matching ErrCannotPersist, and ErrStorage when badger itself failed).
// It checks the directory now (present, the same one, writable, with room
// left), so a readiness check sees a fault even while nothing is
// written. It is cheap (three system calls) and safe for concurrent use.
func (s *Store) Health() error { return s.health.check() }

// Incarnation returns the random id this Open minted (26 characters of
// base32): a runtime lease stamped with another incarnation was written
// by a process that no longer holds the directory. It makes the store
// exclusive, in the sense of package store's doc.
func (s *Store) Incarnation() string { return s.incarnation }

// Close waits for running transactions to end, closes badger (flushing its
// memtable) and releases the directory. Afterwards Update, View and Close
// return store.ErrClosed. No goroutine of the Store or of badger outlives
// Close, with one exception: badger retries a failed flush of its
// memtable forever, so once the store cannot persist (ErrCannotPersist)
// Close waits for badger at most 10 seconds (not at all when the
// directory is gone or replaced: nothing written there would persist),
// then returns, leaving badger's goroutines behind; exit the process
// before opening that directory again.
//
// Errors: store.ErrClosed on a second Close; ErrStorage if badger fails to
// close cleanly (the directory is released all the same, and badger
// replays its log on the next Open); ErrCannotPersist if badger did not
// close within the grace.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.active.Wait() // no transaction begins once closed is set
	s.subs.WakeAll()
	if s.gs != nil {
		s.gs.close()
	}
	err := s.closeDB()
	if lerr := s.lock.release(); err == nil && lerr != nil {
		return fmt.Errorf("badgerstore: release lock: %w", lerr)
	}
	if err != nil {
		return storageErr("close", err)
	}
	return nil
}
