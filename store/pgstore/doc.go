// Package pgstore is baton's store.Store on PostgreSQL, for several
// coordinator processes, on several machines, sharing one database. A
// single process on one machine is better served by store/badgerstore,
// which needs no server.
//
// # Basics
//
// Open connects a pool (github.com/jackc/pgx/v5/pgxpool) and brings the
// store's schema up to date; Close releases both:
//
//	s, err := pgstore.Open(ctx, "postgres://baton@db.internal/baton", pgstore.Options{Logger: logger})
//	...
//	defer s.Close()
//
// Every record kind has a table with a column per field, in one schema
// (Options.Schema, "baton" by default), so several stores can share a
// database. Open creates the schema in one transaction under an advisory
// lock, so processes that start together create it once; it refuses a
// schema written by another version (store.ErrFormat).
//
// Isolation is per workspace. An Update is a READ COMMITTED transaction
// that takes the advisory lock of a workspace before its first statement
// on that workspace's rows and holds it until it ends: two Updates of one
// workspace run one after the other, two of different workspaces never
// wait for each other. The reads across workspaces (ListWorkspaces,
// PendingHandoffs(""), DueWakeups, QueuedContinuations, LiveLaunches(""))
// take no lock: a function that writes back a record one of them returned
// reads it again by its key first. A deadlock or a lock wait past
// Options.LockTimeout re-runs the function, up to
// Options.MaxConflictRetries times. View is one REPEATABLE READ, READ ONLY
// snapshot, never retried. The store is a store.Notifier across processes
// (LISTEN/NOTIFY on "<schema>_changes").
//
// Errors match the store sentinels, ErrDatabase (the server could not be
// reached or failed a statement), store.ErrFormat and store.ErrTxDone, and through
// them the root codes of package baton; text PostgreSQL cannot store (a
// NUL byte, invalid UTF-8) is refused with baton.ErrInvalid, at the
// statement or, for a queued write, at the commit.
//
// DESIGN.md beside this package says what each store.Tx method locks and
// why that is enough, and how statements are batched into round trips;
// README.md holds the benchmarks.
//
// # Caveats
//
// A notification is sent just after its commit, not inside it: a process
// that dies in between leaves the others unaware of that change until
// something else wakes them. A reader that must not depend on
// notifications reads the feed on a timer as well.
//
// A process frozen inside an Update (SIGSTOP, a paused VM) holds its
// workspace for at most Options.IdleInTransactionTimeout (5 s); resumed,
// its Update fails with ErrDatabase. If the connection is lost during
// COMMIT, Update returns ErrDatabase without knowing whether it committed.
// An Update that touches thousands of workspaces holds as many locks:
// split such work per workspace. Every process on a schema must run the
// same version of this package. Times are stored to the microsecond
// (truncated) and come back in UTC. The store needs Options.MaxConns plus
// two connections. A function given to Update or View must not call Close
// and must not share its Tx with other goroutines.
package pgstore
