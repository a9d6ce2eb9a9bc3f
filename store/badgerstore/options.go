package badgerstore

import (
	"runtime"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

// Profile sizes badger's memory: the memtable (allocated whole on Open), the
// block cache and the table sizes. baton's records are small (a handoff is a
// few KiB of JSON), so neither profile needs badger's defaults, which cost
// about 85 MiB of heap before the first write.
type Profile int

const (
	// ProfileDefault suits a long-running host: a 16 MiB memtable, an
	// 8 MiB block cache and Snappy-compressed tables. The heap after Open
	// is about 21 MiB (badger's defaults: about 85 MiB; measured on
	// linux/amd64 by TestHeapAfterOpen). Records up to 1 MiB stay in the
	// LSM tree.
	ProfileDefault Profile = iota
	// ProfileSmall suits tests, CLIs and tiny embeddings: a 1 MiB memtable,
	// no block cache and uncompressed tables. The heap after Open is about
	// 1.5 MiB. Records up to 64 KiB stay in the LSM tree (a small memtable
	// needs a lower value threshold: badger refuses a threshold above 15%
	// of the memtable).
	ProfileSmall
)

// String returns "default" or "small".
func (p Profile) String() string {
	switch p {
	case ProfileDefault:
		return "default"
	case ProfileSmall:
		return "small"
	}
	return "Profile(" + strconv.Itoa(int(p)) + ")"
}

// Durability says when a committed Update is on disk.
type Durability int

const (
	// DurabilitySync (the default) makes every commit wait for an fsync of
	// badger's logs: once Update returns nil, the transaction survives a
	// crash of the process and of the machine. The fsync dominates an
	// Update's latency on most disks; on Linux, concurrent commits share
	// one (group commit; see the package documentation and
	// Options.PerCommitSync).
	DurabilitySync Durability = iota
	// DurabilityNoSync returns from a commit once it is in badger's
	// memory-mapped write-ahead log: it survives a crash of the process
	// (the OS still holds the pages) but not a power loss or kernel crash,
	// which may lose the last commits, each one whole (never half of a
	// transaction). Use it for tests and for data you can rebuild.
	DurabilityNoSync
)

// String returns "sync" or "nosync".
func (d Durability) String() string {
	switch d {
	case DurabilitySync:
		return "sync"
	case DurabilityNoSync:
		return "nosync"
	}
	return "Durability(" + strconv.Itoa(int(d)) + ")"
}

// DefaultMaxConflictRetries is how many times Update re-runs its function
// after a serialization conflict when Options.MaxConflictRetries is 0.
const DefaultMaxConflictRetries = 16

// Options configure Open. The zero value is ready to use: ProfileDefault,
// DurabilitySync, DefaultMaxConflictRetries and no logging.
type Options struct {
	// Logger receives badger's own log lines under the name "badger"
	// (badger's INFO lines, which narrate table loads and compactions, at
	// debug level) and the store's retries at debug level. Nil means
	// zap.NewNop().
	Logger *zap.Logger
	// Profile sizes badger's memory; see Profile.
	Profile Profile
	// Durability says whether a commit waits for an fsync; see Durability.
	Durability Durability
	// PerCommitSync turns group commit off: with DurabilitySync, every
	// commit then runs badger's own fsync (SyncWrites) before it is
	// acknowledged, alone. Group commit (the default on Linux; elsewhere
	// every commit syncs alone) shares one sync among the commits that
	// are concurrent, with the same guarantee; see the package
	// documentation. It has no effect with DurabilityNoSync.
	PerCommitSync bool
	// MaxConflictRetries bounds how many times Update re-runs its function
	// after badger reports a serialization conflict, before it returns
	// store.ErrTxConflict. 0 means DefaultMaxConflictRetries; a negative
	// value means never retry.
	MaxConflictRetries int
}

// maxRetries resolves MaxConflictRetries.
func (o Options) maxRetries() int {
	switch {
	case o.MaxConflictRetries == 0:
		return DefaultMaxConflictRetries
	case o.MaxConflictRetries < 0:
		return 0
	}
	return o.MaxConflictRetries
}

// validate refuses values no constant names.
func (o Options) validate() error {
	if o.Profile != ProfileDefault && o.Profile != ProfileSmall {
		return baton.Errorf(baton.ErrInvalid, "badgerstore: unknown %v", o.Profile)
	}
	if o.Durability != DurabilitySync && o.Durability != DurabilityNoSync {
		return baton.Errorf(baton.ErrInvalid, "badgerstore: unknown %v", o.Durability)
	}
	return nil
}

// groupCommit reports whether o asks for group commit: DurabilitySync
// without PerCommitSync, on Linux, where an fsync of a file writes back
// the pages dirtied through another process's or descriptor's memory map
// (the rounds of groupSync rely on it).
func (o Options) groupCommit() bool {
	return o.Durability == DurabilitySync && !o.PerCommitSync && runtime.GOOS == "linux"
}

// cachePerShard is the byte budget of each of the 16 shards of the cache
// of decoded records: 4 MiB of values in all with ProfileDefault, 256 KiB
// with ProfileSmall (the decoded records take about as much again). A
// record is a few hundred bytes to a few KiB.
func (o Options) cachePerShard() int {
	if o.Profile == ProfileSmall {
		return 16 << 10
	}
	return 256 << 10
}

// valueThreshold is the value size from which badger keeps a value in its
// value log (see badgerOptions).
func (o Options) valueThreshold() int {
	if o.Profile == ProfileSmall {
		return 64 << 10
	}
	return 1 << 20
}

// badgerOptions translates o into badger's options for dir. With group
// commit, badger does not sync: groupSync does.
func (o Options) badgerOptions(dir string, log *zap.Logger, group bool) badger.Options {
	b := badger.DefaultOptions(dir).
		WithLogger(newBadgerLogger(log)).
		WithSyncWrites(o.Durability == DurabilitySync && !group).
		WithDetectConflicts(true). // serializability rests on it
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false). // badger's metrics are process-wide expvars
		WithNumCompactors(2).      // the minimum badger accepts
		WithNumMemtables(2)
	switch o.Profile {
	case ProfileSmall:
		return b.
			WithMemTableSize(1 << 20).
			WithValueThreshold(int64(o.valueThreshold())).
			WithBaseTableSize(1 << 20).
			WithCompression(options.None).
			WithBlockCacheSize(0). // allowed only without compression
			WithValueLogFileSize(1 << 20)
	default:
		return b.
			WithMemTableSize(16 << 20).
			WithValueThreshold(int64(o.valueThreshold())).
			WithCompression(options.Snappy).
			WithBlockCacheSize(8 << 20).
			WithValueLogFileSize(64 << 20)
	}
}
