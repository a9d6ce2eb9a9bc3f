// Package store defines the records baton keeps and the transactional Store
// every backend implements.
//
// # Basics
//
// A Store runs functions in transactions: Update for read-write, View for
// read-only. Inside one, a Tx gives typed access to workspaces, sessions,
// handoffs, reservations, wakeups and continuations, with the indexes the
// rules need: the pending handoffs (of a workspace, its pending slot, or of
// every workspace, in O(pending)), a handoff by (workspace, request id),
// sessions of a workspace in creation order, a workspace's wakeups (all, or
// those pinned to a session), due wakeups, and the live launches.
//
// The store knows records, not rules. Which transition is legal, which
// session is current, who may launch: all of that lives in packages handoff
// and session. A backend only stores, indexes and serializes, and enforces the
// two uniqueness rules that cannot be checked from outside a transaction
// without a race: (workspace, request id) and the one pending slot.
//
// Backends: store/memstore (in memory), store/badgerstore (embedded, the
// default) and store/pgstore (PostgreSQL, several processes). A backend is
// correct when store/storetest.Run passes against it.
//
// # Caveats
//
// Update may run its function more than once (conflict retry): keep side
// effects (engine calls, file writes, channel sends) outside it, after it
// returns nil. Records are values; slices inside them (Handoff.History) are
// copied by the backend on the way in and out.
//
// # Optional capabilities
//
// A Store may also be a Notifier (a commit wakes the readers of the change
// feed). A backend that one process holds alone while it is open
// (badgerstore, by its directory lock) is exclusive: it has a method
// Incarnation() string returning a random id minted at each open. A
// runtime lease (Reservation.LeaseStore) written under another
// incarnation was written by a process that is no longer running, so
// package handoff takes it at once instead of waiting for it to lapse, and
// package session skips the admission of a two-phase start, which only
// fences out other processes. Several coordinators sharing one open store
// share its incarnation and still respect each other's live leases. A
// decorator of a Store should pass both through.
package store
