package badgerstore_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// commitShapes are the sub-benchmarks of the commit benchmarks: fsync on
// with 1 and 16 concurrent committers, and fsync off.
var commitShapes = []struct {
	name string
	sync bool
	conc int
}{
	{"sync=on/conc=1", true, 1},
	{"sync=on/conc=16", true, 16},
	{"sync=off/conc=1", false, 1},
}

// runConcurrent calls commit b.N times from conc goroutines (each with its
// own index) and reports commits/s and the CPU time of the process per
// commit.
func runConcurrent(b *testing.B, conc int, commit func(worker int, n uint64) error) {
	b.Helper()
	runConcurrentOps(b, conc, "commit", commit)
}

// runConcurrentOps is runConcurrent for operations named unit: it reports
// <unit>s/s and cpu-us/<unit>.
func runConcurrentOps(b *testing.B, conc int, unit string, commit func(worker int, n uint64) error) {
	b.Helper()
	var next atomic.Int64
	var failed atomic.Value
	b.ReportAllocs()
	b.ResetTimer()
	cpuBefore, cpuOK := processCPU()
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				if err := commit(w, uint64(n)); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	cpuAfter, _ := processCPU()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	if cpuOK {
		b.ReportMetric(float64((cpuAfter-cpuBefore).Microseconds())/float64(b.N), "cpu-us/"+unit)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit+"s/s")
}

// BenchmarkBadgerRawCommit is the floor: raw badger (the options this
// package uses, the default profile), one small key per transaction, committed
// with badger's own per-commit fsync (SyncWrites) or without fsync.
func BenchmarkBadgerRawCommit(b *testing.B) {
	for _, sh := range commitShapes {
		b.Run(sh.name, func(b *testing.B) {
			db := openRaw(b, sh.sync)
			runConcurrent(b, sh.conc, func(w int, n uint64) error { return rawCommit(db, w, n) })
		})
	}
}

// BenchmarkBadgerWideCommit is BenchmarkBadgerRawCommit at the width of
// a transfer's commit (wideCommit). Against BenchmarkBadgerRawCommit, it
// shows what badger itself charges for a commit's width, before any of
// baton's code runs.
func BenchmarkBadgerWideCommit(b *testing.B) {
	for _, sh := range commitShapes {
		if sh.conc != 1 {
			continue
		}
		b.Run(sh.name, func(b *testing.B) {
			db := openRaw(b, sh.sync)
			runConcurrent(b, sh.conc, func(w int, n uint64) error { return wideCommit(db, w, n) })
		})
	}
}

// wideWidth and wideValue are the shape of wideCommit.
const wideWidth = 13

var wideValue = make([]byte, 300)

// wideCommit is a raw commit as wide as a transfer's: it reads 13 keys
// (absent: each commit writes keys of its own) and writes 13 values of
// 300 bytes to them (number n of worker w). The three
// commits of a transfer without a report write 39 values, about 8 KiB in
// all (its records, their indexes and the change feed's entries), and
// read up to 13 keys each.
func wideCommit(db *badger.DB, w int, n uint64) error {
	return db.Update(func(txn *badger.Txn) error {
		for k := range wideWidth {
			key := binary.BigEndian.AppendUint64([]byte(fmt.Sprint("w", w, "/", k, "/")), n)
			if _, err := txn.Get(key); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			if err := txn.Set(key, wideValue); err != nil {
				return err
			}
		}
		return nil
	})
}

// openRaw opens raw badger in a directory of its own with the options
// this package uses (the default profile), with badger's per-commit fsync
// (SyncWrites) or without fsync; closed at the end of the benchmark.
func openRaw(b *testing.B, sync bool) *badger.DB {
	b.Helper()
	opts := badger.DefaultOptions(b.TempDir()).WithLogger(nil).WithSyncWrites(sync).
		WithDetectConflicts(true).WithNumVersionsToKeep(1).WithMetricsEnabled(false).
		WithNumCompactors(2).WithNumMemtables(2).WithMemTableSize(16 << 20).
		WithValueThreshold(1 << 20).WithBlockCacheSize(8 << 20).WithValueLogFileSize(64 << 20)
	db, err := badger.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// rawCommit is the floor's transaction: one small key (number n of
// worker w) in a transaction of its own.
func rawCommit(db *badger.DB, w int, n uint64) error {
	return db.Update(func(txn *badger.Txn) error {
		return txn.Set(binary.BigEndian.AppendUint64([]byte(fmt.Sprint("k", w, "/")), n), []byte("v"))
	})
}

// BenchmarkBadgerStoreCommit is the same shape through Store.Update: one
// small record (a wakeup, which leaves no change in the feed) per Update,
// each goroutine in a workspace of its own. With sync=on it runs with group
// commit (the default) and with PerCommitSync, badger's per-commit fsync.
func BenchmarkBadgerStoreCommit(b *testing.B) {
	for _, group := range []bool{true, false} {
		for _, sh := range commitShapes {
			if !sh.sync && !group {
				continue
			}
			name := sh.name
			if sh.sync {
				name = fmt.Sprintf("group=%v/%s", group, name)
			}
			b.Run(name, func(b *testing.B) {
				opts := badgerstore.Options{PerCommitSync: !group}
				if !sh.sync {
					opts.NoSync = true
				}
				s := open(b, b.TempDir(), opts)
				ctx := context.Background()
				runConcurrent(b, sh.conc, func(w int, n uint64) error {
					return s.Update(ctx, func(tx store.Tx) error {
						return tx.PutWakeup(store.Wakeup{ID: baton.WakeupID(fmt.Sprint("w-", n)),
							Workspace: baton.WorkspaceID(fmt.Sprint("ws-", w)), Prompt: "p", Status: store.WakeupFired})
					})
				})
			})
		}
	}
}
