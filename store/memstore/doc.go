// Package memstore is baton's in-memory store.Store: zero configuration, no
// disk, no goroutines. Use it in tests, in demos, and when a process embeds
// baton without needing its state to survive a restart.
//
// # Basics
//
// New returns an empty store (the zero Store works too). Transactions are
// serializable in the simplest way: one Update at a time, holding a write
// lock; Views share a read lock, so a View never sees half of an Update and
// every View is a consistent snapshot. An Update writes in place and keeps
// an undo log; if its function returns an error or panics, the log is
// replayed backwards and every record and index is as it was. Update never
// retries, so its function runs exactly once (the store.Store contract
// still allows other backends to run it more than once).
//
// Every index the store.Tx contract names is a map kept up to date on each
// write: the pending slot and (workspace, request id) of handoffs, the
// pending list, sessions, handoffs, wakeups, continuations and instructions
// by workspace, wakeups by pinned session, the queued continuations, the
// live launches (of all workspaces and by workspace), and a sorted list of
// pending wakeups for DueWakeups. No query scans records it does not return;
// list queries sort what they return.
//
// The change feed of each workspace is a slice appended when an Update
// commits: its writes of handoffs, sessions and instructions are noted, one
// per record (the last value, in the order the records were first
// written), numbered after the workspace's last change, without gaps. A
// rolled-back Update leaves the feed untouched. Store implements
// store.Notifier: after an Update commits changes, and after the write lock
// is released, each subscriber of a grown workspace (or of all) gets a
// coalesced wake-up; Close wakes every subscriber once.
//
// Records are copied on the way in and out (Handoff.History included), and
// times are stored in UTC without their monotonic clock reading, as a
// durable backend stores them: code that compares times with == instead of
// time.Time.Equal fails here as it would on badgerstore or pgstore.
//
// Beyond the store.Tx contract, memstore refuses with baton.ErrInvalid a
// record whose primary key, Workspace or (handoffs) RequestID is empty, and a
// PutHandoff that would change a handoff's Workspace or RequestID. PutSession
// keeps the Seq the store gave on insert. ListWorkspaces is sorted by ID;
// PendingHandoffs("") is oldest (first inserted) first.
//
// # Caveats
//
// A function given to Update or View must not call Update or View on the
// same Store: the nested call waits for a lock its caller holds, and the
// program deadlocks. This is not detected. Waiting for the lock does not
// watch the context: Update and View check it before and after taking the
// lock, and never run their function under a done context.
//
// A Tx is valid only while its function runs; afterwards every method
// returns store.ErrTxDone. Do not share a Tx between goroutines.
//
// Everything is lost on Close or when the process exits. Memory grows with
// every record inserted: store.Tx has no delete.
package memstore
