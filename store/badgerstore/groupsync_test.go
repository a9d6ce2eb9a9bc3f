package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// syncLog records, in one order, what the group commit did: rounds, the
// files each synced, commits and acknowledgements, with the test's own
// listing of badger's log files at each round start and commit.
type syncLog struct {
	dir string

	mu     sync.Mutex
	seq    int
	rounds map[uint64]*roundLog
	commit map[uint64]*commitLog
}

type roundLog struct {
	start, end int
	files      map[string]bool // log files present at the start
	// synced are the files synced, with the time their fsync started
	// and whether a newer file of its kind existed then (it was closed).
	synced map[string]fileSync
	err    error
}

type fileSync struct {
	at     int
	closed bool
}

type commitLog struct {
	at, ack int
	vlog    bool
	files   []string // log files present when the commit returned
}

// list returns the log files in dir and the newest of each kind.
func (l *syncLog) list() (map[string]bool, map[string]string) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		panic(err)
	}
	files := map[string]bool{}
	newest := map[string]logFile{}
	for _, e := range entries {
		if lf, ok := parseLogFile(e.Name()); ok {
			files[lf.name] = true
			if n, ok := newest[lf.ext]; !ok || lf.num > n.num {
				newest[lf.ext] = lf
			}
		}
	}
	out := map[string]string{}
	for ext, lf := range newest {
		out[ext] = lf.name
	}
	return files, out
}

// syncHooks observe the rounds and the commits they cover, one function
// per kind of syncEvent (a nil one ignores it). commit runs when a
// commit has returned from badger, ack just before its Update may return
// or notify; id numbers commits. fail, if set, is called before each
// fsync and replaces its result when it returns an error. skipClosed
// breaks the rounds the way DB.Sync is broken (closed files are never
// synced), so that a test can show its checker catches the rotation trap.
type syncHooks struct {
	roundStart func(round uint64)
	syncing    func(round uint64, name string) // just before the file's fsync
	fail       func(round uint64, name string) error
	roundEnd   func(round uint64, err error)
	commit     func(id uint64, vlog bool)
	ack        func(id uint64)
	wait       func()             // a goroutine waits for a running round (under the lock)
	listing    func(round uint64) // the round lists the directory
	skipClosed bool
}

// install makes h observe (and break, with skipClosed) g's rounds.
func (h *syncHooks) install(g *groupSync) {
	g.hook, g.skipClosed = h.event, h.skipClosed
}

func (h *syncHooks) event(e syncEvent) error {
	switch {
	case e.what == "roundStart" && h.roundStart != nil:
		h.roundStart(e.round)
	case e.what == "syncing" && h.syncing != nil:
		h.syncing(e.round, e.name)
	case e.what == "roundEnd" && h.roundEnd != nil:
		h.roundEnd(e.round, e.err)
	case e.what == "commit" && h.commit != nil:
		h.commit(e.id, e.vlog)
	case e.what == "ack" && h.ack != nil:
		h.ack(e.id)
	case e.what == "wait" && h.wait != nil:
		h.wait()
	case e.what == "listing" && h.listing != nil:
		h.listing(e.round)
	}
	if e.what == "syncing" && h.fail != nil {
		return h.fail(e.round, e.name)
	}
	return nil
}

func (l *syncLog) hooks(skipClosed bool) *syncHooks {
	l.rounds, l.commit = map[uint64]*roundLog{}, map[uint64]*commitLog{}
	return &syncHooks{
		skipClosed: skipClosed,
		roundStart: func(r uint64) {
			files, _ := l.list()
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seq++
			l.rounds[r] = &roundLog{start: l.seq, files: files, synced: map[string]fileSync{}}
		},
		syncing: func(r uint64, name string) {
			_, newest := l.list()
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seq++
			l.rounds[r].synced[name] = fileSync{at: l.seq, closed: newest[name[strings.LastIndexByte(name, '.'):]] != name}
		},
		roundEnd: func(r uint64, err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seq++
			l.rounds[r].end, l.rounds[r].err = l.seq, err
		},
		commit: func(id uint64, vlog bool) {
			files, _ := l.list()
			names := make([]string, 0, len(files))
			for f := range files {
				names = append(names, f)
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seq++
			l.commit[id] = &commitLog{at: l.seq, vlog: vlog, files: names}
		},
		ack: func(id uint64) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.seq++
			l.commit[id].ack = l.seq
		},
	}
}

// check returns every acknowledgement that no sync covered, and how many
// commits relied on a closed (rotated) log file synced for them.
//
// A commit is covered when every log file it may have written to (every
// *.mem file present when it returned, and every *.vlog file if it wrote
// a large value) is, before its acknowledgement (and the end of the round
// that synced it): synced by an fsync that started after the commit
// returned; or synced, by any round, when a newer file of
// its kind existed (the file was closed: nothing is written to it
// afterwards); or missing at the start of such a round (badger
// deletes a log only once its content is flushed and synced elsewhere).
func (l *syncLog) check() (violations []string, rotated int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]uint64, 0, len(l.commit))
	for id := range l.commit {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := l.commit[id]
		if c.ack == 0 {
			violations = append(violations, fmt.Sprintf("commit %d never acknowledged", id))
			continue
		}
		usedClosed := false
		for _, f := range c.files {
			if strings.HasSuffix(f, ".vlog") && !c.vlog {
				continue
			}
			covered := false
			for _, r := range l.rounds {
				if r.end == 0 || r.end > c.ack || r.err != nil {
					continue
				}
				fs, synced := r.synced[f]
				switch {
				case synced && fs.at > c.at:
					covered = true
					usedClosed = usedClosed || fs.closed
				case r.start > c.at && !r.files[f]:
					covered = true // flushed and deleted
				case synced && fs.closed:
					covered = true // synced after it closed
					usedClosed = true
				}
				if covered {
					break
				}
			}
			if !covered {
				violations = append(violations, fmt.Sprintf("commit %d acknowledged while %s was not synced since", id, f))
			}
		}
		if usedClosed {
			rotated++
		}
	}
	return violations, rotated
}

// groupWorkload runs concurrent Updates in 8 workspaces on a Small
// store (1 MiB memtable and value-log files), with records of 8 KiB and,
// every 16th, of 80 KiB (above the 64 KiB value threshold), so that
// memtables and value-log files rotate many times, and returns the log.
func groupWorkload(t *testing.T, skipClosed, watch bool) *syncLog {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("group commit is used on Linux only")
	}
	dir := t.TempDir()
	s, err := Open(dir, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.gs == nil {
		t.Fatal("group commit is off")
	}
	if !watch && s.gs.watch != nil {
		_ = s.gs.watch.close()
		s.gs.watch = nil
	}
	l := &syncLog{dir: dir}
	l.hooks(skipClosed).install(s.gs)
	const workers, perWorker = 8, 60
	small, large := strings.Repeat("s", 8<<10), strings.Repeat("L", 80<<10)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for n := range perWorker {
				prompt := small
				if n%16 == 15 {
					prompt = large
				}
				err := s.Update(context.Background(), func(tx store.Tx) error {
					return tx.PutWakeup(store.Wakeup{ID: baton.WakeupID(fmt.Sprintf("w-%d-%d", w, n)),
						Workspace: baton.WorkspaceID(fmt.Sprint("ws-", w)), Prompt: prompt, Status: store.WakeupFired})
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Update: %v", err)
	}
	return l
}

// TestGroupCommitCoversEveryAck proves the ordering group commit relies
// on, memtable and value-log rotations included: no Update is acknowledged
// before every log file its commit may be in is synced (see check).
//
// With watch=on (the default) a round lists the directory only after the
// directory watch reported a new log file, so the test also proves that
// the watch reports every rotation a commit relied on; with watch=off,
// every round lists.
func TestGroupCommitCoversEveryAck(t *testing.T) {
	for _, watch := range []bool{true, false} {
		t.Run(fmt.Sprintf("watch=%v", watch), func(t *testing.T) {
			l := groupWorkload(t, false, watch)
			violations, rotated := l.check()
			for _, v := range violations[:min(len(violations), 10)] {
				t.Error(v)
			}
			if len(violations) > 10 {
				t.Errorf("... and %d more", len(violations)-10)
			}
			if rotated == 0 {
				t.Error("no commit relied on a rotated log file: the workload proves nothing about rotation")
			}
			if len(l.commit) != 8*60 || len(l.rounds) >= len(l.commit) {
				t.Errorf("%d commits shared %d rounds; want 480 commits and fewer rounds", len(l.commit), len(l.rounds))
			}
			t.Logf("%d commits, %d sync rounds, %d commits covered through a rotated log file", len(l.commit), len(l.rounds), rotated)
		})
	}
}

// TestGroupCommitListsAfterCreation checks that the directory watch is
// what decides the listings: without a new log file, rounds sync the open
// newest files and list nothing; after badger creates one, the next round
// lists.
func TestGroupCommitListsAfterCreation(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("group commit is used on Linux only")
	}
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.gs == nil || s.gs.watch == nil {
		t.Skip("no directory watch (inotify unavailable)")
	}
	var mu sync.Mutex
	var rounds, listings int
	(&syncHooks{
		roundStart: func(uint64) { mu.Lock(); rounds++; mu.Unlock() },
		syncing:    func(uint64, string) {},
		roundEnd:   func(uint64, error) {},
		commit:     func(uint64, bool) {},
		ack:        func(uint64) {},
		listing:    func(uint64) { mu.Lock(); listings++; mu.Unlock() },
	}).install(s.gs)
	ctx := t.Context()
	commit := func(n int) {
		t.Helper()
		err := s.Update(ctx, func(tx store.Tx) error {
			return tx.PutWakeup(store.Wakeup{ID: baton.WakeupID(fmt.Sprint("w-", n)), Workspace: "ws-a", Status: store.WakeupFired})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	counts := func() (int, int) { mu.Lock(); defer mu.Unlock(); return rounds, listings }
	for n := range 20 {
		commit(n)
	}
	r, l := counts()
	if r != 20 || l != 1 {
		t.Fatalf("20 sequential commits: %d rounds, %d listings; want 20 rounds and 1 listing (the first)", r, l)
	}
	// A file named like a write-ahead log appears (what a rotation
	// does): the next round lists, and then the rounds stop listing.
	f, err := os.Create(filepath.Join(dir, "99999.mem"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	commit(20)
	if _, l := counts(); l != 2 {
		t.Fatalf("after a new log file: %d listings, want 2", l)
	}
	if err := os.Remove(filepath.Join(dir, "99999.mem")); err != nil {
		t.Fatal(err)
	}
	commit(21)
	commit(22)
	if r, l := counts(); r != 23 || l != 2 {
		t.Fatalf("%d rounds, %d listings; want 23 and 2 (a deletion needs no listing)", r, l)
	}
}

// TestGroupCommitCheckerCatchesRotationTrap runs the same workload with
// rounds that never sync closed files (what relying on DB.Sync alone
// does) and requires the checker to find acknowledgements no sync covered.
func TestGroupCommitCheckerCatchesRotationTrap(t *testing.T) {
	l := groupWorkload(t, true, true)
	violations, _ := l.check()
	if len(violations) == 0 {
		t.Fatal("the checker accepted rounds that never sync a rotated log file")
	}
	t.Logf("%d uncovered acknowledgements found, e.g. %s", len(violations), violations[0])
}

// TestGroupCommitViewWaitsForSync checks the other half of the rule: a
// commit is visible before its sync, so a View that read a key it wrote
// (its record, or the guard of a list it changed) must not return (and
// let its caller act) before that sync; a View that read none of them
// returns at once, whatever else is being synced.
func TestGroupCommitViewWaitsForSync(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("group commit is used on Linux only")
	}
	insertW1 := func(tx store.Tx) error {
		return tx.PutWakeup(store.Wakeup{ID: "w-1", Workspace: "ws-a", Status: store.WakeupPending})
	}
	h := store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r", State: store.StateStopping}
	tests := []struct {
		name   string
		commit func(tx store.Tx) error // insertW1 if nil
		read   func(tx store.Tx) error
		wait   bool
	}{
		{"the record the commit wrote", nil, func(tx store.Tx) error {
			w, err := tx.GetWakeup("w-1")
			if err == nil && w.Workspace != "ws-a" {
				err = fmt.Errorf("read %+v", w)
			}
			return err
		}, true},
		{"a list the commit changed", nil, func(tx store.Tx) error {
			ws, err := tx.ListWakeups("ws-a", "")
			if err == nil && len(ws) != 1 {
				err = fmt.Errorf("listed %d wakeups, want the new one", len(ws))
			}
			return err
		}, true},
		{"another workspace's record and list", nil, func(tx store.Tx) error {
			if _, err := tx.GetWakeup("w-0"); err != nil {
				return err
			}
			_, err := tx.ListWakeups("ws-b", "")
			return err
		}, false},
		// Only the list's guard tells this View that the list changed: it
		// reads no record of the handoff that left it.
		{"a list an entry left", func(tx store.Tx) error {
			done := h
			done.State = store.StateCompleted
			return tx.PutHandoff(done)
		}, func(tx store.Tx) error {
			hs, err := tx.PendingHandoffs("")
			if err == nil && len(hs) != 0 {
				err = fmt.Errorf("%d pending, want none", len(hs))
			}
			return err
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.TempDir(), Options{Small: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := t.Context()
			if err := s.Update(ctx, func(tx store.Tx) error {
				if err := tx.PutHandoff(h); err != nil {
					return err
				}
				return tx.PutWakeup(store.Wakeup{ID: "w-0", Workspace: "ws-b", Status: store.WakeupPending})
			}); err != nil {
				t.Fatal(err)
			}
			commit := tt.commit
			if commit == nil {
				commit = insertW1
			}
			committed, roundHeld, release := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
			waiting := make(chan struct{}, 8)
			(&syncHooks{
				roundStart: func(uint64) { roundHeld <- struct{}{}; <-release },
				syncing:    func(uint64, string) {},
				roundEnd:   func(uint64, error) {},
				commit:     func(uint64, bool) { committed <- struct{}{} },
				ack:        func(uint64) {},
				wait:       func() { waiting <- struct{}{} },
			}).install(s.gs)
			updated := make(chan error, 1)
			go func() { updated <- s.Update(ctx, commit) }()
			<-committed
			<-roundHeld // the round covering the commit has started, and is held
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
				if err := <-updated; err != nil {
					t.Errorf("Update: %v", err)
				}
			}()

			read, viewed := make(chan error, 1), make(chan error, 1)
			go func() {
				viewed <- s.View(ctx, func(tx store.Tx) error {
					err := tt.read(tx)
					read <- err
					return err
				})
			}()
			if err := <-read; err != nil {
				t.Fatalf("the View's reads: %v", err)
			}
			if !tt.wait {
				// Bounded: the round stays held, so a View that waited
				// for it would never return.
				select {
				case err := <-viewed:
					if err != nil {
						t.Fatalf("View: %v", err)
					}
				case <-waiting:
					t.Fatal("the View waits for a sync of keys it did not read")
				case <-time.After(10 * time.Second):
					t.Fatal("the View did not return while an unrelated commit was being synced")
				}
				return
			}
			select { // the View waits for the held round...
			case <-waiting:
			case err := <-viewed:
				t.Fatalf("View returned (%v) while the commit it saw was not synced", err)
			}
			select {
			case err := <-viewed:
				t.Fatalf("View returned (%v) while the commit it saw was not synced", err)
			default:
			}
			close(release) // ...and returns once it ends
			if err := <-viewed; err != nil {
				t.Fatalf("View: %v", err)
			}
		})
	}
}

// TestGroupCommitSyncFailure fails the first sync round: the Update it
// covers returns ErrStorage, and so does every later transaction, until
// the store is opened again, which finds the commit (badger replays its
// log; the page cache still held it).
func TestGroupCommitSyncFailure(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("group commit is used on Linux only")
	}
	dir := t.TempDir()
	s, err := Open(dir, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	boom := errors.New("disk on fire")
	(&syncHooks{
		roundStart: func(uint64) {},
		syncing:    func(uint64, string) {},
		roundEnd:   func(uint64, error) {},
		commit:     func(uint64, bool) {},
		ack:        func(uint64) {},
		fail: func(round uint64, _ string) error {
			if round == 1 {
				return boom
			}
			return nil
		},
	}).install(s.gs)
	ctx := t.Context()
	insert := func(id baton.WakeupID) func(store.Tx) error {
		return func(tx store.Tx) error {
			return tx.PutWakeup(store.Wakeup{ID: id, Workspace: "ws-a", Status: store.WakeupFired})
		}
	}
	err = s.Update(ctx, insert("w-1"))
	if !errors.Is(err, ErrStorage) || !errors.Is(err, boom) {
		t.Fatalf("Update covered by a failed sync: err = %v, want ErrStorage wrapping the sync's error", err)
	}
	for name, err := range map[string]error{
		"Update": s.Update(ctx, insert("w-2")),
		"View":   s.View(ctx, func(tx store.Tx) error { _, err := tx.GetWakeup("w-1"); return err }),
	} {
		if !errors.Is(err, ErrStorage) {
			t.Errorf("%s after a failed sync: err = %v, want ErrStorage", name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s, err = Open(dir, Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.View(ctx, func(tx store.Tx) error { _, err := tx.GetWakeup("w-1"); return err }); err != nil {
		t.Errorf("after reopening: %v", err)
	}
}
