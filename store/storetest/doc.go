// Package storetest is the conformance suite of store.Store: a backend is
// correct when Run passes against it, in the way testing/fstest checks an
// fs.FS.
//
// # Basics
//
// A backend's test calls Run with a function that returns a fresh, empty
// store and registers its cleanup:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s := memstore.New()
//			t.Cleanup(func() { _ = s.Close() })
//			return s
//		})
//	}
//
// Run checks, each in its own subtest on its own store: atomicity (a failed
// Update leaves nothing behind and returns fn's error as is; a transaction
// reads its own writes); isolation (concurrent read-modify-write Updates
// lose nothing, concurrent claims of a pending slot or a request id have
// one winner, a View is a consistent snapshot and refuses writes); every
// index of store.Tx and how it follows Puts; the uniqueness rules; the
// errors; value semantics (every field round-trips, and no caller can
// change a stored record without a Put); the change feed (numbered from 1
// per workspace in commit order, one change per record a committed
// transaction wrote, with its last value); and, for a store.Notifier, a
// notification after each commit that appended changes, once they are
// visible.
//
// Update, View, Diff and TakeSnapshot are exported for the tests of
// packages built on a store: TakeSnapshot reads what a store holds through
// the Tx interface, and Diff compares two snapshots, so a test can prove
// that a refused operation changed nothing. FaultStore wraps a store and
// makes the Nth write fail (once, or from then on), or the Nth commit
// (before or after it committed), with ErrInjected: a test of code built on
// a store runs an operation once to count its writes, then fails each in
// turn and checks that the error reaches the caller and that a snapshot
// shows a consistent state.
//
// # Caveats
//
// The suite assumes only the store.Store contract. Where that contract
// leaves a choice open, Run accepts any answer: the order of ListWorkspaces
// and PendingHandoffs(""), the Location of returned times (compared with
// time.Time.Equal), whether a nil slice comes back empty, what Seq starts at,
// and whether a second Close returns nil or store.ErrClosed. "Oldest first"
// means creation (insert) order; the suite inserts with growing CreatedAt,
// so a backend ordering by (CreatedAt, insert order) passes too.
//
// On the change feed, Seqs must increase strictly but may have gaps. On
// store.Notifier the suite is stricter than the interface: it expects no
// spurious notification, and waits up to 10 s for one it is owed.
//
// Times in the suite have microsecond precision, the finest PostgreSQL
// keeps. A backend retrying serialization conflicts internally may still
// return store.ErrTxConflict; the concurrency tests retry such Updates a
// bounded number of times, as the contract allows. The concurrency tests run
// a few hundred Updates: slow backends take seconds, not minutes.
package storetest
