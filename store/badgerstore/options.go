package badgerstore

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Options configure Open. The zero value is ready to use: the default
// memory profile, every commit fsynced, 16 conflict retries and no logging.
type Options struct {
	// Logger receives badger's own log lines under the name "badger"
	// (badger's INFO lines, which narrate table loads and compactions, at
	// debug level) and the store's retries at debug level. Nil means
	// zap.NewNop().
	Logger *zap.Logger
	// Small sizes badger's memory for tests, CLIs and tiny embeddings: a
	// 1 MiB memtable, no block cache, uncompressed tables, about 1.5 MiB
	// of heap after Open, records up to 64 KiB in the LSM tree. The
	// default suits a long-running host: a 16 MiB memtable, an 8 MiB
	// block cache, Snappy-compressed tables, about 21 MiB of heap
	// (badger's own defaults: about 85 MiB; TestHeapAfterOpen measures
	// both), records up to 1 MiB in the LSM tree.
	Small bool
	// NoSync returns from a commit once it is in badger's memory-mapped
	// write-ahead log: it survives a crash of the process (the OS still
	// holds the pages) but not a power loss or kernel crash, which may
	// lose the last commits, each one whole. Use it for tests and data
	// you can rebuild. By default every commit waits for an fsync of
	// badger's logs before Update returns (on Linux concurrent commits
	// share one: group commit).
	NoSync bool
	// PerCommitSync turns group commit off: every commit then runs
	// badger's own fsync (SyncWrites) before it is acknowledged, alone,
	// with the same guarantee. It has no effect with NoSync.
	PerCommitSync bool
	// MaxConflictRetries bounds how many times Update re-runs its function
	// after badger reports a serialization conflict, before it returns
	// store.ErrTxConflict. 0 means 16; a negative value means never retry.
	MaxConflictRetries int
	// MinFreeBytes is the free space under which the directory counts as
	// full: Open refuses it, and once a sync round (or, without group
	// commit, a commit) finds less, the store fails with
	// ErrCannotPersist. badger writes its tables and logs through memory
	// maps, and a write to a mapped page the file system has no room for
	// kills the process (SIGBUS) instead of failing: the reserve keeps
	// room for the flushes and compactions in flight. 0 means 256 MiB
	// (16 MiB with Small), room for a flush, a compaction and a new
	// value-log file; a negative value turns the check off.
	MinFreeBytes int64
}

// minFree resolves MinFreeBytes (0: unchecked).
func (o Options) minFree() uint64 {
	switch {
	case o.MinFreeBytes < 0:
		return 0
	case o.MinFreeBytes == 0 && o.Small:
		return 16 << 20
	case o.MinFreeBytes == 0:
		return 256 << 20
	}
	return uint64(o.MinFreeBytes)
}

// groupCommit reports whether o asks for group commit: sync without
// PerCommitSync, on Linux, where an fsync of a file writes back
// the pages dirtied through another process's or descriptor's memory map
// (the rounds of groupSync rely on it).
func (o Options) groupCommit() bool {
	return !o.NoSync && !o.PerCommitSync && runtime.GOOS == "linux"
}

// cachePerShard is the byte budget of each of the 16 shards of the cache
// of decoded records: 4 MiB of values in all by default, 256 KiB with
// Small (the decoded records take about as much again). A
// record is a few hundred bytes to a few KiB.
func (o Options) cachePerShard() int {
	if o.Small {
		return 16 << 10
	}
	return 256 << 10
}

// valueThreshold is the value size from which badger keeps a value in its
// value log (see badgerOptions).
func (o Options) valueThreshold() int {
	if o.Small {
		return 64 << 10
	}
	return 1 << 20
}

// badgerOptions translates o into badger's options for dir. With group
// commit, badger does not sync: groupSync does.
func (o Options) badgerOptions(dir string, log *zap.Logger, group bool) badger.Options {
	b := badger.DefaultOptions(dir).
		WithLogger(newBadgerLogger(log, nil)).
		WithSyncWrites(!o.NoSync && !group).
		WithDetectConflicts(true). // serializability rests on it
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false). // badger's metrics are process-wide expvars
		WithNumCompactors(2).      // the minimum badger accepts
		WithNumMemtables(2).
		WithValueThreshold(int64(o.valueThreshold()))
	if o.Small {
		return b.
			WithMemTableSize(1 << 20).
			WithBaseTableSize(1 << 20).
			WithCompression(options.None).
			WithBlockCacheSize(0). // allowed only without compression
			WithValueLogFileSize(1 << 20)
	}
	return b.
		WithMemTableSize(16 << 20).
		WithCompression(options.Snappy).
		WithBlockCacheSize(8 << 20).
		WithValueLogFileSize(64 << 20)
}

// badgerLogger adapts a zap logger to badger.Logger. badger's method set
// differs from zap's SugaredLogger (Warningf, not Warnf), and badger ends
// most formats with a newline, which a structured log does not want.
//
// Levels: badger's ERROR and WARNING map to zap's Error and Warn. badger's
// INFO lines narrate its housekeeping (tables opened, memtables flushed,
// compactions) and map to Debug, so a host logging at Info sees only what
// needs attention. The message is formatted only when the level is enabled.
//
// An error line that says badger failed to write its tables (a memtable
// flush, which badger retries in the background forever) fails the
// store's health: the commits in that memtable may never reach a table.
type badgerLogger struct {
	z *zap.Logger
	h *health // nil: no health to report to
}

var _ badger.Logger = badgerLogger{}

func newBadgerLogger(z *zap.Logger, h *health) badgerLogger {
	return badgerLogger{z: z.Named("badger").WithOptions(zap.AddCallerSkip(1)), h: h}
}

func (l badgerLogger) Errorf(format string, args ...any) {
	if l.h != nil && strings.HasPrefix(format, "error flushing memtable") {
		_ = l.h.fail(fmt.Errorf("badger failed to flush a memtable: %v", args))
	}
	l.log(zapcore.ErrorLevel, format, args)
}

func (l badgerLogger) Warningf(format string, args ...any) { l.log(zapcore.WarnLevel, format, args) }

func (l badgerLogger) Infof(format string, args ...any) { l.log(zapcore.DebugLevel, format, args) }

func (l badgerLogger) Debugf(format string, args ...any) { l.log(zapcore.DebugLevel, format, args) }

func (l badgerLogger) log(lvl zapcore.Level, format string, args []any) {
	if !l.z.Core().Enabled(lvl) {
		return
	}
	l.z.Log(lvl, strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
}
