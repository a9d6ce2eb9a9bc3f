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
// The zero Options mean the default memory profile (about 21 MiB of heap;
// Options.Small: about 1.5 MiB), every commit fsynced before Update
// returns (on Linux, concurrent commits share one fsync: group commit),
// 16 conflict retries and no logging. Open creates the directory if
// needed, locks it until Close, and writes a format marker; it refuses a
// directory in use (ErrLocked) and one that holds another format or a
// database baton did not write (store.ErrFormat).
//
// Transactions are serializable: an Update runs its function in a badger
// transaction, and a commit that lost a race with another re-runs the
// function from scratch on a fresh snapshot, up to
// Options.MaxConflictRetries times (then store.ErrTxConflict). View runs
// on a read-only snapshot; it never waits for an Update and never
// retries. Records are the JSON of the store types, times in UTC. The
// store is a store.Notifier (in process) and exclusive (Incarnation).
//
// A store that can no longer persist (its directory removed, read-only or
// full, a failed fsync) fails: from then on every Update and View returns
// ErrCannotPersist, and so does Health, which a readiness check calls.
// Close the store and open it again once the fault is fixed.
//
// Errors match the store sentinels, ErrLocked, store.ErrFormat,
// ErrCannotPersist, ErrStorage (badger failed, or a stored value does not
// decode) and store.ErrTxDone (a Tx used after its function returned), and
// through them the root codes of package baton.
//
// DESIGN.md beside this package says why the store is serializable, what
// group commit and the health checks guarantee, and what lists cost.
//
// # Caveats
//
// Options.NoSync survives a crash of the process but a power loss may
// drop the last commits, each one whole. Group commit relies on badger's
// file names (checked on Open) and Linux's fsync semantics; elsewhere
// every commit syncs alone.
//
// One process per directory: the lock is an flock, released by Close or
// by the death of the process; a network file system may not honour it.
// An Open right after the death of a process that was starting a child
// may fail with ErrLocked for a moment (the child holds the lock until it
// runs its program). Open takes no context: replaying a large log is not
// cancellable. store.Tx deletes nothing, so the directory grows with the
// records written. A function given to Update or View must not call Close
// and must not share its Tx with other goroutines.
package badgerstore
