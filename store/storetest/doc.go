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
// Update leaves nothing behind, across every record kind, and returns fn's
// error as is; a transaction reads its own writes); isolation (concurrent
// read-modify-write Updates lose nothing, concurrent inserts of a pending
// handoff or of one request id have exactly one winner, a View is a
// consistent snapshot and refuses writes with store.ErrReadOnly); every index
// of store.Tx and how it follows Puts (live launches included: a launch that
// is gone is never listed); the uniqueness rules; the errors
// (store.ErrNotFound, store.ErrDuplicate, store.ErrClosed, a done context);
// value semantics (every field of every record round-trips, times as the
// same instant, and no caller can change a stored record without a Put); and
// the change feed: each workspace numbers its changes from 1, one change per
// handoff, session or instruction a committed transaction wrote, with its
// last value, none from other kinds or from a rolled-back transaction, none
// of a transaction's own listed inside it, Changes paging by after and
// limit, changes returned as the caller's copies, and numbering that
// follows commit order under concurrent Updates.
// A store that implements store.Notifier is checked to notify after a
// commit, once its changes are visible, and only then.
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
// and ListPendingHandoffs, the Location of returned times (compared with
// time.Time.Equal), whether a nil slice comes back empty, what Seq starts at,
// whether a Put with an empty ID returns baton.ErrInvalid or
// store.ErrNotFound, and whether a second Close returns nil or
// store.ErrClosed. Where the contract says less than baton needs, Run is
// stricter than the comments of store.Tx: PutWakeup and PutContinuation of a missing record return
// store.ErrNotFound, and a PutHandoff that changes Workspace or RequestID
// returns an error matching baton.ErrInvalid. "Oldest first" means creation
// (insert) order; the suite inserts with growing CreatedAt, so a backend
// ordering by (CreatedAt, insert order) passes too.
//
// On the change feed, Run requires the first Seq of a workspace to be 1 and
// Seqs to increase strictly, but not that they have no gaps; the order of the
// changes of one transaction is the backend's. On store.Notifier it is
// stricter than the interface, which allows spurious notifications: the
// suite expects none while a transaction runs, after a rolled-back one, after
// a commit that appended no change, or for a subscription to another
// workspace. It waits up to 10 s for a notification it is owed.
//
// Times in the suite have microsecond precision, the finest PostgreSQL
// keeps. A backend retrying serialization conflicts internally may still
// return store.ErrTxConflict; the concurrency tests retry such Updates a
// bounded number of times, as the contract allows. The concurrency tests run
// a few hundred Updates: slow backends take seconds, not minutes.
package storetest
