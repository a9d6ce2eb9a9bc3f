// Package badgerstore is baton's embedded default store.Store: one
// directory on local disk, no server, built on badger v4. It is what a
// single host process (the workshop example, an agent runner on a
// developer machine) should use; several processes on several machines
// share store/pgstore instead.
//
// # Basics
//
// Open a directory with the zero Options and close the store when done:
//
//	s, err := badgerstore.Open(dir, badgerstore.Options{Logger: logger})
//	...
//	defer s.Close()
//
// The zero Options mean ProfileDefault (about 21 MiB of heap), every
// commit fsynced before Update returns (DurabilitySync, with group commit),
// DefaultMaxConflictRetries and no logging.
// Open creates the directory if needed, locks it until Close, and writes a
// format marker; it refuses a directory in use (ErrLocked) and one that
// holds another format or a database baton did not write (ErrFormat).
// The first Open of a directory written by a baton that predates
// store.Tx.OpenInstructions indexes its open instructions, reading every
// instruction record once (in batches; a crash midway redoes it on the
// next Open), and the first Open of one written by a baton whose
// LiveLaunches(ws) scanned a list of keys indexes its live launches the
// same way, deleting that list; then it moves the directory from format 1
// to format 2. An older baton refuses a format 2 directory (ErrFormat): it
// would read the live launches of a workspace from the list this code
// deleted, miss the processes a crashed process left running, and could
// start a second agent beside one.
//
// Update runs its function in a badger read-write transaction. badger
// checks at commit that no key the transaction read was written by a
// transaction that committed since its snapshot; if one was, the commit is
// refused, and Update runs the function again from scratch on a fresh
// snapshot, after a short random pause, up to Options.MaxConflictRetries
// more times before it returns store.ErrTxConflict. The function must
// therefore have no effect outside the transaction. View runs its function
// on a read-only snapshot; it never waits for an Update and never retries.
// A transaction that fails, panics or loses a race leaves nothing behind.
//
// Records are JSON (spelled out in codec.go, times in UTC to the
// nanosecond) under keys with a format-version prefix; every index is a set
// of keys written in the same transaction as its record. Decoding JSON is
// most of the CPU a read costs, so the store keeps the records it last
// read or committed, decoded, beside their JSON: a read whose stored bytes
// are the very bytes kept (compared in full) takes a copy instead of
// decoding, so the cache is never stale. A transaction also keeps the
// records it read or wrote, so that reading one again inside it costs no
// lookup at all. The records a transfer writes (handoffs, sessions,
// workspaces, reservations, launches) are encoded without reflection, to
// the very bytes encoding/json writes for them (codec_append.go, checked
// against json.Marshal on random records), so the format is JSON's
// whichever encoder wrote it.
//
// What makes the store serializable, and not only snapshot-isolated, is
// which keys a transaction reads:
//
//   - uniqueness (a record id, a workspace's request id, a workspace's one
//     pending slot) is a single key every writer reads with Get before it
//     writes; a Get of a missing key counts as a read, so of two concurrent
//     inserts the second to commit conflicts, re-runs, and sees the first;
//   - every list (sessions, handoffs, wakeups and continuations of a
//     workspace, wakeups of a session, due wakeups, queued continuations,
//     pending handoffs, workspaces) has a guard key that every change to
//     the list writes and every read of the list inside an Update reads.
//     badger's conflict detection knows keys, not ranges, so without the
//     guard a scan would not conflict with a later insert into it;
//   - the open instructions of a workspace are one key, and its live
//     launches another, read with Get and rewritten by every change to
//     them, so a read of them conflicts with any concurrent change without
//     a guard;
//   - Session.Seq, and the insert order of handoffs, continuations,
//     launches and instructions, come from a counter per workspace and
//     kind, read and written by each insert;
//   - the change feed of a workspace is numbered from its own counter,
//     which a committing Update that wrote handoffs, sessions or
//     instructions reads and advances just before it commits (one entry
//     per record, its last value). Of two Updates appending to one
//     workspace's feed, the second to commit therefore conflicts and
//     re-runs: Seq follows commit order without gaps, and a rolled-back
//     or conflicting try leaves no entry. Changes and LastSeq read the
//     same counter, so a feed read inside an Update is serializable too.
//
// Store implements store.Notifier (in process: subscribers are woken after
// a commit is durable and visible, coalesced, never blocking the
// committer) and store.Exclusive (Incarnation is a random id minted by
// each Open: one process holds the directory at a time).
//
// Lists read only their entries: the pending handoffs are one key per
// pending handoff, the live launches of every workspace one key per live
// launch, and DueWakeups reads the pending wakeups in (At, ID) order up
// to now. But a key deleted from a list (a launch that ended, a wakeup
// that fired) stays in badger as a tombstone that every scan of the list
// steps over until a compaction drops it, so a scan also costs the
// entries removed lately: a list of one workspace's live launches read
// its one live launch in 3 to 6 us after 10 ended launches, and in 0.6
// to 0.8 ms after 10,000. OpenInstructions and LiveLaunches(ws) read one
// value per workspace instead, which lists its open instructions, or its
// live launches, and then their records, whatever the workspace's history
// (BenchmarkBadgerOpenInstructions; BenchmarkBadgerLiveLaunches: 2 to 3
// us after 10 or 10,000 ended launches): nearly every instruction leaves
// its set when delivered, and every launch when it ends, every turn of a
// workspace being a launch. LiveLaunches("") stays a list, in CreatedAt
// order across workspaces, and so steps over the launches of every
// workspace ended lately: one value for all workspaces would be a key
// that every launch of every workspace rewrites, and Updates of unrelated
// workspaces would conflict on it. The first Open of a format 1
// directory builds the sets from the records and deletes the lists of
// keys of the live launches of each workspace; later Opens read nothing
// for them.
//
// # Group commit
//
// With DurabilitySync on Linux, concurrent Updates share their fsyncs,
// while each acknowledged commit stays exactly as durable as with
// badger's per-commit fsync (SyncWrites), which Options.PerCommitSync
// restores. badger with SyncWrites syncs its log once per transaction,
// even when it writes several at once, so concurrent committers gain
// little from it. Instead, badger runs without SyncWrites: a commit
// returns once it is in badger's memory-mapped logs, and Update then
// waits for a sync round that started after that. Rounds run one at a
// time, on the goroutine of a waiting Update (the store starts none); one
// round covers every commit that returned before it started, in any
// workspace (a waiter about to start a round while other commits are
// still inside badger yields once, so that they can join it). No lock is
// held around a transaction: unrelated workspaces never wait for each
// other, only for a shared round.
//
// A round must cover what SyncWrites would have synced, and DB.Sync does
// not: it syncs only the active memtable's write-ahead log and the newest
// value-log file, so a commit in a memtable rotated out just before it
// stays unsynced until that memtable is flushed. A round therefore lists
// the directory and fdatasyncs, through descriptors of its own, the newest
// write-ahead log (*.mem), the newest value-log file (*.vlog) if a commit
// wrote a value large enough for it since the last round, and every older
// log file once, the first time it sees it: badger writes only to the
// newest file of each kind, so an older one is closed and that sync covers
// every write it ever gets. A commit's log file is thus synced by the
// round, or was closed and synced by an earlier round, or is gone, which
// badger does only after the memtable is flushed to a synced table recorded
// in its synced manifest. When a new log file appears, the round also syncs
// the directory, which badger itself never does for them. Listing the
// directory and opening the files would cost about as much CPU as the fsync
// itself, so the store watches the directory (inotify, for created entries)
// and keeps the newest file of each kind open: a round lists only when a
// log file was created since the last listing. The kernel queues that event
// inside the system call that creates the file, so a file created before a
// round started is reported to it; a lost event (queue overflow) counts as
// a creation, and without inotify every round lists. On Linux an fdatasync
// of a file writes back the pages dirtied through a memory map of it, which
// is all badger's own msync does. Open checks that the directory holds log
// files named as this relies on, and falls back to SyncWrites otherwise;
// TestGroupCommitCoversEveryAck checks every acknowledgement of a
// concurrent run with memtable and value-log rotations against the files
// synced, and shows that rounds relying on the active log alone fail it.
//
// A commit is visible to other transactions before its round ends. So that
// nothing acts on it before it is durable, every key a commit writes is
// dirty from just before badger commits it until its round ends, and a View
// or Update that read a dirty key waits, before it returns, until the key
// is clean. What a transaction returns depends only on the keys it read:
// its Gets (of a record, a uniqueness key, a counter, a missing key alike),
// and for each list it scanned the list's guard, which every change to the
// list writes (an entry that left the list is read through nothing else); a
// feed read reads the feed's counter. So a transaction that read no dirty
// key read only what covered commits wrote, and transfers in other
// workspaces, whose keys it never reads, never make it wait. An Update that
// committed returns after its own round, which started after every commit
// its snapshot showed was in badger's logs, and after the keys it read are
// clean; TestGroupCommitViewWaitsForSync checks which reads wait. The
// change feed's notifications go out after the round. Once a round fails,
// its commits and every later transaction return ErrStorage: after a failed
// fsync the kernel may have dropped pages, so nothing visible is known to
// be durable; the store must be closed and opened again (badger then
// replays its logs), as PostgreSQL restarts after a failed fsync.
//
// Besides the store sentinels, errors match ErrLocked, ErrFormat,
// ErrStorage (badger failed, or a stored value does not decode) and
// ErrTxDone (a Tx used after its function returned), and through them the
// root codes of package baton.
//
// # Caveats
//
// Durability: by default an Update returns only after badger's logs are
// fsynced, which keeps baton's promise that nothing is lost on a crash, of
// the process or of the machine. The fsync is most of an Update's cost
// (BenchmarkBadgerStoreCommit; concurrent commits share one, see Group
// commit). Group commit depends on badger's file names (checked on Open)
// and on Linux's fsync semantics; elsewhere every commit syncs alone.
// DurabilityNoSync
// survives a crash of the process (the log is memory-mapped and the OS
// keeps its pages) but a power loss may drop the last commits, whole.
//
// Memory: badger's defaults allocate about 85 MiB on Open, mostly a 64 MiB
// memtable. ProfileDefault keeps about 21 MiB and ProfileSmall, for tests
// and small tools, about 1.5 MiB; TestHeapAfterOpen measures both. The
// cache of decoded records grows to about 4 MiB of JSON (256 KiB with
// ProfileSmall) and as much again of records. A
// record larger than the profile's value threshold (1 MiB, or 64 KiB for
// ProfileSmall) is kept in badger's value log, whose space this package
// never reclaims; baton's records are a few KiB. The writes of one Update
// must fit in badger's batch limit, 15% of the memtable (about 2.4 MiB, or
// 150 KiB for ProfileSmall): past it a write fails with ErrStorage
// (wrapping badger.ErrTxnTooBig) and the Update cannot commit. The open
// instructions of a workspace, and its live launches, are each one value
// of about 40 bytes per member (with baton's ids), rewritten by each
// change to them: cheap for the few a workspace normally waits on or
// runs, but a workspace that piles up thousands pays for all of them on
// each insert; past the value threshold (about 1,600 with ProfileSmall,
// 27,000 with ProfileDefault) each rewrite goes to the value log, and
// past the value-log file size (about 26,000 with ProfileSmall) an insert
// fails with ErrStorage.
//
// Going back: a baton that predates format 2 refuses a directory this
// code opened (ErrFormat, format "2"); there is no way back to format 1.
// store.Tx deletes nothing, so the directory grows with the records
// written; overwritten versions are dropped by badger's compactions.
//
// One process per directory: the lock is an flock on a file in the
// directory, released by Close or by the death of the process. A second
// Open, from this process or another, fails with ErrLocked; a network file
// system may not honour the lock. A process killed while it was starting a
// child process (an agent) leaves the lock with that child until the
// child has started its program, a moment: an Open right after such a
// death may fail with ErrLocked and succeed when tried again. Open takes no context: replaying a large
// log on Open is not cancellable.
//
// Concurrency: two Updates conflict only when one writes what the other
// read. A list read in an Update conflicts with any concurrent change to
// that list; the global lists (pending handoffs, due wakeups, queued
// continuations, live launches, workspaces) therefore serialize an Update
// that reads them with every concurrent change to them, in any workspace.
// Every change to the open instructions or the live launches of a
// workspace reads and rewrites its one value, so two Updates that change
// those of one workspace conflict (one re-runs); those of two workspaces
// never do. An Update that
// writes nothing never conflicts. A function given to Update or View must
// not call Close (Close waits for it) and must not share its Tx with
// other goroutines.
package badgerstore
