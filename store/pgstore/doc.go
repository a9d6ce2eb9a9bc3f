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
// Every record kind has a table with a column per field, and the indexes
// the store's rules need: the primary keys; a unique index on (workspace,
// request id), the idempotency key of a handoff; a unique partial index on
// the workspace of the pending handoffs, which both enforces one pending
// handoff per workspace and lists the pending ones in O(pending); partial
// indexes of the pending wakeups by due time, of the queued continuations
// and of the live launches; and a change feed table keyed by workspace
// and Seq (a commit numbers its changes from one more than the highest
// Seq of the workspace, which the Store caches, and the key keeps them
// in commit order: a commit that numbered from a stale Seq finds it
// taken and runs again). The tables live in one schema (Options.Schema, "baton" by
// default), so several stores, or a test per schema, can share a database.
// Open creates the schema and applies the migrations embedded in this
// package that it lacks, in one transaction under an advisory lock, so
// processes that start together migrate once; it refuses a schema written
// by a newer version (ErrSchema).
//
// Update runs its function in a SERIALIZABLE transaction. When PostgreSQL
// reports a serialization failure (SQLSTATE 40001), a deadlock (40P01) or a
// uniqueness race with a concurrent transaction, Update rolls back and
// calls the function again, after a short random pause, up to
// Options.MaxConflictRetries more times, then returns store.ErrTxConflict.
// The uniqueness rules are answered, not raised: an insert that would
// break one (ON CONFLICT DO NOTHING) or a handoff that would take a held
// pending slot (a NOT EXISTS guard) writes nothing and returns
// store.ErrDuplicate, and the transaction goes on, as the store.Tx
// contract allows. View runs its function in a REPEATABLE READ, READ ONLY
// transaction: one consistent snapshot, never retried.
//
// Round trips: a Tx method is synchronous, but not every statement costs
// a round trip. BEGIN travels with the first statement; writes whose
// outcome is already known (a Put of a row the transaction has read, a
// reservation upsert) are queued and sent, in one pgx batch, with the next
// read or with the COMMIT; the first read of a workspace's rows in an
// Update also reads its workspace and reservation rows, and the
// transaction answers later reads of rows it has read or written from
// memory. Across transactions, the Store keeps a cache of the workspace,
// reservation and pending handoff rows its Updates read and wrote (below),
// from which an Update answers reads without a round trip. A typical
// transition of a transfer (read the handoff, the reservation and the
// workspace, write the handoff and the workspace) thus takes one round
// trip: the check of the cached rows it read, its writes and the change
// feed entries, in one batch, which runs as the implicit transaction
// PostgreSQL gives a pipeline's statements up to its Sync (serializable,
// the default isolation level of the pool's connections), without BEGIN
// and COMMIT statements; two when its rows are not cached (BEGIN and the
// first read, then the rest and COMMIT). No connection is held between
// transactions.
//
// The row cache holds each row with its version: migration 0004 adds a
// version column to those three tables, which every insert and update by
// anyone sets to a new value from one sequence (so a row's versions grow
// and are never reused): the store's own updates draw it themselves, and
// a trigger draws it for any other write (migration 0005). An Update that
// answers a read from the cache records the version it assumed; the next
// batch it sends, a read's or the commit's, first reads the version of
// each such row, by primary key, in the transaction, and a statement that
// finds another version raises an error (SQLSTATE BT001), after which the
// server runs nothing more of the batch, COMMIT included. A row the batch
// also writes is checked by its first write instead, which matches the
// row only at that version and raises the same error at another one: a
// cached row read and written costs one statement. The Update then rolls back,
// drops those rows from the cache and runs its function again, reading
// from the server; that rerun is not a lost serialization race (it does
// not count against Options.MaxConflictRetries). If the function returns
// an error, or writes nothing, the cached rows it read are checked the
// same way before Update returns.
//
// Why that is as safe as reading the rows: the check reads each row at
// the transaction's snapshot, so if the transaction commits, every row
// its function took from the cache had, in that snapshot, the value the
// function saw: its decisions were taken on what the transaction reads.
// Under SERIALIZABLE, PostgreSQL tracks the check's reads like any other
// (a concurrent write of such a row is a read-write dependency, which
// aborts one of the transactions when it could break serializability),
// so the Updates stay serializable. The cache needs no coherence
// protocol: an entry is only a guess, which the check confirms or
// refutes. Stores in other processes, and an operator's UPDATE in psql,
// change versions (the trigger), so their writes are caught the same way.
// The cache takes a row after the commit of a transaction that read or
// wrote it (a written row as a read of it would return it, with the
// version the write returned; a later version is kept over an earlier
// one), and drops the rows a transaction that did not commit read from it
// or wrote. Views never read from it: they read the server, and always
// see committed rows of their snapshot.
//
// The store is a store.Notifier. Open starts a listener on a connection of
// its own (LISTEN on the channel "<schema>_changes"); after each commit
// that appends to a workspace's change feed, the store wakes its own
// subscribers at once and sends a NOTIFY with the workspace id, which
// wakes the subscribers of every other Store on the schema, in this
// process or another. When the listener's connection is lost it reconnects
// and wakes every subscriber, since changes may have been missed.
//
// Besides the store sentinels, errors match ErrDatabase (the server could
// not be reached or failed a statement), ErrSchema and ErrTxDone, and
// through them the root codes of package baton; text PostgreSQL cannot
// store (a NUL byte, invalid UTF-8) is refused with baton.ErrInvalid.
//
// # Caveats
//
// The NOTIFY of a commit is sent just after the commit, not inside it:
// PostgreSQL serializes the commits of all transactions that notify, under
// one lock held across the WAL flush, which would cost most of the
// throughput of concurrent commits. So a process that dies between a
// commit and its notification (a few milliseconds) leaves the other
// processes unaware of that change until something else wakes them; a
// reader that must not depend on notifications reads the feed on a timer
// as well. Notifications are wake-ups, never data: read Tx.Changes.
//
// Serializable transactions abort more often than they must: PostgreSQL
// tracks reads by index page, so two Updates of different workspaces whose
// rows share a page can conflict, and one of them runs again. Keep
// functions given to Update short and free of side effects. While the
// tables are small (a few hundred workspaces share a handful of index
// pages), an Update of many round trips among many concurrent ones can
// lose attempt after attempt; so from its fourth attempt on, an Update
// runs alone: it waits for the Updates under way on the schema, in every
// process, to end, and those that start meanwhile wait for it. (It takes
// an advisory lock, keyed hashtextextended('baton.pgstore.gate:' ||
// schema, 0), exclusively for its session, and the schema_migrations
// table in ACCESS EXCLUSIVE mode; an Update of one round trip takes the
// advisory lock in shared mode, any other the table in ACCESS SHARE mode,
// as Updates of pgstore versions before the advisory lock do.) A function given to Update must therefore
// not wait for another Update. A process frozen inside an Update stalls
// such an attempt, and the Updates queued behind it, for up to a second,
// after which the attempt counts as lost. Concurrent transfers pay for
// these conflicts: on this package's lifecycle benchmark
// (BenchmarkPGLifecycle) sixteen concurrent transfers complete no more
// per second than one.
//
// Every process on a schema should run the same version of this
// package. A newer one migrates the schema as it opens it, and an older
// one keeps running on it: from migration 0007 on (the change feed
// without its head table) an older one's Updates that append to the feed
// fail with ErrDatabase, naming the missing table, rather than number
// changes wrongly; and an older one's attempt to run alone does not keep
// this version's one-batch Updates out, so it may lose again.
//
// Times are stored to the microsecond (truncated), as PostgreSQL keeps
// them, and come back in UTC. PostgreSQL text holds neither NUL bytes nor
// invalid UTF-8: such a string makes the write fail with baton.ErrInvalid,
// at the statement or, for a queued write, at the commit, and the Update
// does not commit. A queued write's other failures also surface at the
// next statement or at the commit.
//
// If the connection is lost while the COMMIT is under way, Update returns
// ErrDatabase without knowing whether the transaction committed; the
// store's rules make a retry of a baton operation safe, but a caller that
// counts on exactly one commit must check.
//
// The row cache holds at most Options.CacheRows rows (DefaultCacheRows),
// drops an arbitrary one when full, and holds no settled handoff; a stale
// entry costs a wasted round trip and a rerun of the function, never a
// wrong answer. It relies on rows of those tables never being deleted: a
// row deleted behind the store stays cached, and a Put of it fails at the
// commit (ErrDatabase); a row deleted and created again has a new version.
// Options.CacheRows < 0 turns the cache off (every Update read goes to the
// server).
//
// A function given to Update or View must not call Close (Close waits for
// the pool's connections) and must not share its Tx with other goroutines.
// The pool's connections use the schema as search_path and UTC as time
// zone; the store needs Options.MaxConns plus two connections (the
// listener and the notification publisher).
package pgstore
