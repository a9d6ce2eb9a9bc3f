package badgerstore

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// groupSync is the group commit of DurabilitySync (see the package
// documentation, "Group commit"). badger runs without SyncWrites, so a
// commit returns once its entries are in the memory-mapped write-ahead log
// (and value log); an Update then waits, before it returns, for a sync
// round that started after its commit returned. One round at a time runs,
// on the goroutine of one of the waiters; every commit that returned
// before a round started is covered by it, so concurrent Updates share
// one round's fsyncs.
//
// A round makes durable everything written to badger's logs before it
// started. It lists the directory, then fdatasyncs through descriptors of
// its own:
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
	// a finished round (or failed). A transaction whose snapshot was taken
	// while it was 0 sees only durable commits.
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
	// closedSynced are the closed log files already fsynced; known are
	// the log files whose directory entry is synced (round only).
	closedSynced map[string]struct{}
	known        map[string]struct{}

	hooks *syncHooks // nil outside this package's tests
	ids   atomic.Uint64

	// vlogWrites counts commits that wrote a value to the value log;
	// vlogSynced is its value when the last round started (round only).
	vlogWrites atomic.Uint64
	vlogSynced uint64
}

// failed returns the error of a failed round, if one failed: the store
// can no longer tell what is durable, so it refuses every transaction.
func (g *groupSync) failed() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// snapshot is called right after a transaction took its snapshot. If
// commits not yet covered by a round may be in it, it returns the first
// round to start after the snapshot, which covers them; else 0.
func (g *groupSync) snapshot() uint64 {
	if g.unacked.Load() == 0 {
		return 0
	}
	return g.next()
}

// commit commits txn and returns once the commit is covered by a round.
// conflict reports a lost serialization race (nothing was written).
// vlog says that txn wrote a value that may go to the value log.
func (g *groupSync) commit(txn *badger.Txn, vlog bool) (conflict bool, err error) {
	g.unacked.Add(1)
	defer g.unacked.Add(-1)
	err = txn.Commit()
	var id uint64
	if g.hooks != nil && err == nil {
		id = g.ids.Add(1)
		g.hooks.commit(id, vlog)
	}
	if vlog && !errors.Is(err, badger.ErrConflict) {
		g.vlogWrites.Add(1)
	}
	switch {
	case errors.Is(err, badger.ErrConflict):
		return true, nil
	case err != nil:
		// A failed write may still have reached the log: cover it too,
		// so that what any snapshot shows stays durable.
		_ = g.await(g.next())
		return false, storageErr("commit", err)
	}
	if err := g.await(g.next()); err != nil {
		return false, err
	}
	if g.hooks != nil {
		g.hooks.ack(id)
	}
	return false, nil
}

// syncHooks observe the rounds and the commits they cover (tests of this
// package only). commit runs when a commit has returned from badger, ack
// just before its Update may return or notify; id numbers commits.
type syncHooks struct {
	roundStart func(round uint64)
	syncing    func(round uint64, name string) // just before the file's fsync
	// fail, if set, is called before each fsync and replaces its result
	// when it returns an error.
	fail     func(round uint64, name string) error
	roundEnd func(round uint64, err error)
	commit   func(id uint64, vlog bool)
	ack      func(id uint64)
	wait     func() // a goroutine waits for a running round (under the lock)
	// skipClosed breaks the rounds the way DB.Sync is broken (closed
	// files are never synced), so that a test can show its checker
	// catches the rotation trap.
	skipClosed bool
}

func newGroupSync(dir string, threshold int) *groupSync {
	g := &groupSync{dir: dir, threshold: threshold, closedSynced: map[string]struct{}{}}
	g.cond.L = &g.mu
	return g
}

// next returns the number of the first round that starts after this call.
func (g *groupSync) next() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started + 1
}

// await returns once round target has finished, running rounds itself
// when none is running. It returns the error of the first failed round
// (ErrStorage) if that round is target or an earlier one.
func (g *groupSync) await(target uint64) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.done < target {
		if g.running {
			if g.hooks != nil && g.hooks.wait != nil {
				g.hooks.wait()
			}
			g.cond.Wait()
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
			g.err, g.failedRound = storageErr("sync", err), round
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
	h := g.hooks
	if h != nil {
		h.roundStart(round)
		defer func() { h.roundEnd(round, err) }()
	}
	// Read before the listing: a commit that wrote to the value log and
	// returned before this round started has counted itself.
	vlogWrites := g.vlogWrites.Load()
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
	for name := range g.closedSynced {
		if _, ok := present[name]; !ok {
			delete(g.closedSynced, name) // deleted by badger: names are never reused
		}
	}
	for ext, l := range files {
		newest := uint64(0)
		for _, lf := range l {
			newest = max(newest, lf.num)
		}
		for _, lf := range l {
			active := lf.num == newest
			switch {
			case active && ext == ".vlog" && vlogWrites == g.vlogSynced:
				continue // nothing written to the value log since the last round
			case !active:
				if _, ok := g.closedSynced[lf.name]; ok || (h != nil && h.skipClosed) {
					continue
				}
			}
			if h != nil {
				h.syncing(round, lf.name)
				if h.fail != nil {
					if err := h.fail(round, lf.name); err != nil {
						return err
					}
				}
			}
			if err := fsyncFile(filepath.Join(g.dir, lf.name)); err != nil {
				return err
			}
			if !active {
				g.closedSynced[lf.name] = struct{}{}
			}
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
	g.vlogSynced = vlogWrites
	return nil
}

// logFile is a write-ahead log (00001.mem) or value-log (000001.vlog) file
// of badger.
type logFile struct {
	name, ext string
	num       uint64
}

func parseLogFile(name string) (logFile, bool) {
	for _, ext := range []string{".mem", ".vlog"} {
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
