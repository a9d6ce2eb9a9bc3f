package badgerstore

import (
	"errors"
	"hash/maphash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// groupSync is the group commit of a synced store (see the package
// documentation, "Group commit"). badger runs without SyncWrites, so a
// commit returns once its entries are in the memory-mapped write-ahead log
// (and value log); an Update then waits, before it returns, for a sync
// round that started after its commit returned. One round at a time runs,
// on the goroutine of one of the waiters; every commit that returned
// before a round started is covered by it, so concurrent Updates share
// one round's fsyncs. A waiter about to start a round while other commits
// are still inside badger yields its processor once first, so that they
// can return in time to share it.
//
// A round makes durable everything written to badger's logs before it
// started. It lists the directory (only when the directory watch reported
// a log file created since the last listing: otherwise the files are the
// ones listed then), then fdatasyncs through descriptors of its own (the
// newest file of each kind stays open between rounds):
//
//   - the newest write-ahead log (*.mem: the active memtable's, or one
//     newer if the memtable rotated meanwhile);
//   - the newest value-log file (*.vlog), if a commit wrote a value large
//     enough for it since the last round;
//   - every older *.mem or *.vlog file the first time a round sees it: it
//     is closed (badger writes only to the newest of each kind), so that
//     sync covers every write it will ever get.
//
// A commit that returned before the round started wrote to a file that is
// either the newest of its kind, or closed and synced now or by an earlier
// round after it closed, or gone: badger deletes a write-ahead log only
// after its memtable is flushed to a table it synced and recorded in its
// synced manifest. This is the rotation trap of DB.Sync, which syncs only
// the active memtable's log: a commit in a memtable rotated out before the
// sync would stay unsynced until the flush.
type groupSync struct {
	dir string
	// threshold is badger's value threshold: a value this large goes to
	// the value log.
	threshold int

	// unacked counts commits that have started and are not yet covered by
	// a finished round (a commit whose round failed stays counted): while
	// it is 0, no key is dirty.
	unacked atomic.Int64

	mu      sync.Mutex
	cond    sync.Cond
	started uint64 // rounds started
	done    uint64 // rounds finished (rounds run one at a time, in order)
	running bool
	// err is the error of failedRound, the first round that failed: a
	// failed fsync may have dropped pages the kernel then considers
	// clean, so no later round can prove anything, and every wait for it
	// or a later one returns err.
	err         error
	failedRound uint64
	// dirty counts, per key (by its hash: two keys that share one only
	// make a reader wait longer), the commits that wrote it and are not
	// yet covered by a finished round: a transaction that read none of
	// them read only durable values. A commit whose round failed stays
	// counted.
	dirty map[uint64]int
	seed  maphash.Seed
	// settling counts the transactions waiting in settle for dirty keys:
	// only they need waking when a commit's keys become clean.
	settling int
	// closedSynced are the closed log files already fsynced; known are
	// the log files whose directory entry is synced (round only).
	closedSynced map[string]struct{}
	known        map[string]struct{}
	// active is the newest log file of each kind (".mem", ".vlog") at the
	// last listing, kept open for the rounds' fsyncs; listed says that a
	// listing is current: watch has reported no log file created since
	// (round only).
	active map[string]*activeLog
	listed bool
	// watch reports log files created since the last listing; nil when
	// inotify is unavailable or was lost: then every round lists.
	watch *dirWatch

	// health is the store's: a round ends by checking the directory, and
	// a failed round fails it (which is how transactions learn of it).
	health *health

	// hook observes the rounds and the commits they cover (nil outside
	// this package's tests; see syncEvent); ids numbers the commits for it.
	// skipClosed breaks the rounds the way DB.Sync is broken (closed files
	// are never synced), so that a test can show its checker catches the
	// rotation trap.
	hook       func(syncEvent) error
	ids        atomic.Uint64
	skipClosed bool

	// vlogWrites counts commits that wrote a value to the value log;
	// vlogSynced is its value when the last round started (round only).
	vlogWrites atomic.Uint64
	vlogSynced uint64
}

// settle returns once no key in reads (the keys a transaction read) is
// dirty: once every commit that wrote one of them, and began before this
// call, is covered by a finished round. It returns the error of a failed
// round if it had to wait and a round failed.
func (g *groupSync) settle(reads []key) error {
	if g.unacked.Load() == 0 {
		return nil // no commit in flight: nothing is dirty
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	waited := false
	for g.anyDirty(reads) {
		if g.err != nil {
			return g.err
		}
		waited = true
		_ = g.event(syncEvent{what: "wait"})
		g.settling++
		g.cond.Wait()
		g.settling--
	}
	if waited {
		return g.err
	}
	return nil
}

func (g *groupSync) anyDirty(keys []key) bool {
	if len(g.dirty) == 0 {
		return false
	}
	for _, k := range keys {
		if g.dirty[maphash.Bytes(g.seed, k)] > 0 {
			return true
		}
	}
	return false
}

// commit commits txn, which wrote the keys writes, and returns once the
// commit is covered by a round. Until then the keys are dirty (see
// settle). conflict reports a lost serialization race (nothing was
// written). vlog says that txn wrote a value that may go to the value
// log.
func (g *groupSync) commit(txn *badger.Txn, writes []key, vlog bool) (conflict bool, err error) {
	g.unacked.Add(1)
	hashes := make([]uint64, len(writes))
	for i, k := range writes {
		hashes[i] = maphash.Bytes(g.seed, k)
	}
	g.mu.Lock()
	for _, h := range hashes {
		g.dirty[h]++
	}
	g.mu.Unlock()
	clean := func(err error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if err != nil && g.err != nil {
			return // a failed round: the keys stay dirty, the commit unacked
		}
		for _, h := range hashes {
			if g.dirty[h]--; g.dirty[h] <= 0 {
				delete(g.dirty, h)
			}
		}
		g.unacked.Add(-1)
		if g.settling > 0 {
			// Keys became clean: wake the transactions waiting for
			// them (a round's waiters are woken by its end).
			g.cond.Broadcast()
		}
	}
	if vlog {
		// Counted before the commit can be seen (a round that starts
		// after a transaction saw it syncs the value log) and again once
		// it returned (so does the round that covers it).
		g.vlogWrites.Add(1)
	}
	err = txn.Commit()
	var id uint64
	if g.hook != nil && err == nil {
		id = g.ids.Add(1)
		_ = g.event(syncEvent{what: "commit", id: id, vlog: vlog})
	}
	if vlog {
		g.vlogWrites.Add(1)
	}
	if errors.Is(err, badger.ErrConflict) {
		clean(nil)
		return true, nil
	}
	// A failed write may still have reached the log: it is covered too,
	// so that what any snapshot shows stays durable.
	g.mu.Lock()
	first := g.started + 1 // the first round to start after the commit
	g.mu.Unlock()
	serr := g.await(first)
	clean(serr)
	switch {
	case err != nil:
		return false, storageErr("commit", err)
	case serr != nil:
		return false, serr
	}
	_ = g.event(syncEvent{what: "ack", id: id})
	return false, nil
}

// syncEvent is what a round or a commit reports to groupSync.hook (tests
// of this package only). what is one of: "roundStart", "syncing" (just
// before the fsync of the log file name: an error the hook returns
// replaces the fsync's result), "roundEnd" (err: the round's), "listing"
// (the round lists the directory), "commit" (commit id returned from
// badger; vlog: it may have written to the value log), "ack" (just before
// commit id's Update may return or notify) and "wait" (a goroutine waits
// for a running round, under the lock).
type syncEvent struct {
	what  string
	round uint64
	name  string
	id    uint64
	vlog  bool
	err   error
}

// event reports e to the hook, if any.
func (g *groupSync) event(e syncEvent) error {
	if g.hook == nil {
		return nil
	}
	return g.hook(e)
}

func newGroupSync(dir string, threshold int, health *health) *groupSync {
	g := &groupSync{dir: dir, threshold: threshold, health: health, closedSynced: map[string]struct{}{},
		active: map[string]*activeLog{}, watch: newDirWatch(dir), dirty: map[uint64]int{}, seed: maphash.MakeSeed()}
	g.cond.L = &g.mu
	return g
}

// activeLog is an open descriptor of the newest log file of its kind.
type activeLog struct {
	name string
	f    *os.File
}

// close releases the watch and the descriptors of the rounds. The store
// calls it once no transaction runs (so no round does).
func (g *groupSync) close() {
	if g.watch != nil {
		_ = g.watch.close()
		g.watch = nil
	}
	for ext, a := range g.active {
		_ = a.f.Close() // read-only: nothing to lose
		delete(g.active, ext)
	}
}

// await returns once round target has finished, running rounds itself
// when none is running. It returns the error of the first failed round
// (ErrStorage) if that round is target or an earlier one.
func (g *groupSync) await(target uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	yielded := false
	for g.done < target {
		if g.running {
			_ = g.event(syncEvent{what: "wait"})
			g.cond.Wait()
			continue
		}
		if !yielded && g.unacked.Load() > 1 {
			// Other commits are on their way through badger: let them
			// return, so that the round covers them too.
			yielded = true
			g.mu.Unlock()
			runtime.Gosched()
			g.mu.Lock()
			continue
		}
		g.running = true
		g.started++
		round := g.started
		g.mu.Unlock()
		err := g.round(round)
		g.mu.Lock()
		g.running = false
		g.done = round
		if err != nil && g.err == nil {
			// The store fails (ErrCannotPersist first: its code is the one
			// callers see), with an ErrStorage for a failed fsync: from
			// then on its health refuses every transaction.
			if !errors.Is(err, ErrCannotPersist) {
				err = storageErr("sync", err)
			}
			g.err, g.failedRound = g.health.fail(err), round
		}
		g.cond.Broadcast()
	}
	if g.err != nil && g.failedRound <= target {
		return g.err
	}
	return nil
}

// round is one sync round (see groupSync).
func (g *groupSync) round(round uint64) (err error) {
	_ = g.event(syncEvent{what: "roundStart", round: round})
	defer func() { _ = g.event(syncEvent{what: "roundEnd", round: round, err: err}) }()
	// Read before the listing: a commit that wrote to the value log and
	// returned before this round started has counted itself.
	vlogWrites := g.vlogWrites.Load()
	// Drain the watch before listing: a log file created after the drain
	// is either in the listing or reported to the next round.
	if g.watch != nil {
		created, ok := g.watch.created()
		if !ok {
			_ = g.watch.close()
			g.watch = nil
		}
		if created || !ok {
			g.listed = false
		}
	}
	if g.watch == nil || !g.listed {
		if err := g.list(round); err != nil {
			return err
		}
	}
	for _, ext := range logExts {
		a := g.active[ext]
		if a == nil || (ext == ".vlog" && vlogWrites == g.vlogSynced) {
			continue // none, or nothing written to the value log since the last round
		}
		if err := g.sync(round, a.name, a.f); err != nil {
			return err
		}
	}
	g.vlogSynced = vlogWrites
	// Last, the directory: a round that synced files the directory no
	// longer holds (removed, replaced) must not acknowledge anything. A
	// removal after this check is found by the next round.
	return g.health.probe()
}

// list lists the directory: it fsyncs every closed log file not synced
// yet (the active file of a kind included, once a newer one replaced
// it), opens the newest of each kind, and fsyncs the directory when a
// log file appeared since the last listing.
func (g *groupSync) list(round uint64) error {
	_ = g.event(syncEvent{what: "listing", round: round})
	names, err := readDirNames(g.dir)
	if err != nil {
		return err
	}
	files := map[string][]logFile{}
	present := map[string]struct{}{}
	for _, name := range names {
		if lf, ok := parseLogFile(name); ok {
			files[lf.ext] = append(files[lf.ext], lf)
			present[lf.name] = struct{}{}
		}
	}
	// A file gone was deleted by badger: names are never reused.
	maps.DeleteFunc(g.closedSynced, func(name string, _ struct{}) bool {
		_, ok := present[name]
		return !ok
	})
	stale := false
	for _, ext := range logExts {
		var newest logFile
		for _, lf := range files[ext] {
			if lf.num >= newest.num {
				newest = lf
			}
		}
		a := g.active[ext]
		for _, lf := range files[ext] {
			if lf.num == newest.num {
				continue
			}
			if _, ok := g.closedSynced[lf.name]; ok || g.skipClosed {
				continue
			}
			var f *os.File
			if a != nil && a.name == lf.name {
				f = a.f
			}
			if err := g.sync(round, lf.name, f); err != nil {
				return err
			}
			g.closedSynced[lf.name] = struct{}{}
		}
		if a != nil && a.name != newest.name {
			_ = a.f.Close()
			delete(g.active, ext)
		}
		if newest.name == "" || g.active[ext] != nil {
			continue
		}
		f, err := os.Open(filepath.Join(g.dir, newest.name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Deleted since the listing, so a newer one exists: it was
			// created after this round started (or it would be listed),
			// and the next round lists again.
			stale = true
		case err != nil:
			return err
		default:
			g.active[ext] = &activeLog{name: newest.name, f: f}
		}
	}
	// A log file created since the last round has a directory entry
	// badger never syncs; sync it too (more than SyncWrites does, and
	// only once per rotation).
	newFile := false
	for name := range present {
		if _, ok := g.known[name]; !ok {
			newFile = true
		}
	}
	if newFile {
		if err := fsyncFile(g.dir); err != nil {
			return err
		}
		g.known = present
	}
	g.listed = !stale
	return nil
}

// sync fdatasyncs log file name through f, or through a descriptor of its
// own when f is nil.
func (g *groupSync) sync(round uint64, name string, f *os.File) error {
	if err := g.event(syncEvent{what: "syncing", round: round, name: name}); err != nil {
		return err
	}
	if f == nil {
		return fsyncFile(filepath.Join(g.dir, name))
	}
	return fdatasync(f)
}

// logExts are the kinds of log files a round syncs.
var logExts = [...]string{".mem", ".vlog"}

// logFile is a write-ahead log (00001.mem) or value-log (000001.vlog) file
// of badger.
type logFile struct {
	name, ext string
	num       uint64
}

func parseLogFile(name string) (logFile, bool) {
	for _, ext := range logExts {
		base, ok := strings.CutSuffix(name, ext)
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(base, 10, 64)
		if err != nil {
			return logFile{}, false
		}
		return logFile{name: name, ext: ext, num: n}, true
	}
	return logFile{}, false
}

// checkLayout reports whether dir holds the log files a round relies on:
// at least one write-ahead log and one value-log file, as badger v4
// names them. Without them, group commit is not used.
func checkLayout(dir string) bool {
	names, err := readDirNames(dir)
	if err != nil {
		return false
	}
	seen := map[string]bool{}
	for _, name := range names {
		if lf, ok := parseLogFile(name); ok {
			seen[lf.ext] = true
		}
	}
	return seen[".mem"] && seen[".vlog"]
}

// readDirNames lists dir, unsorted and without a stat per file.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := f.Readdirnames(-1)
	cerr := f.Close()
	return names, errors.Join(err, cerr)
}

// fsyncFile fdatasyncs the file at path through a descriptor of its own:
// the kernel writes back every dirty page of the file, those badger
// dirtied through its memory map included (what badger's own msync does).
// A file gone meanwhile was flushed and deleted by badger, which synced
// its content elsewhere first.
func fsyncFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	serr := fdatasync(f)
	cerr := f.Close()
	return errors.Join(serr, cerr)
}
