// Package store defines the records baton keeps and the transactional Store
// every backend implements.
//
// # Basics
//
// A Store runs functions in transactions: Update for read-write, View for
// read-only. Inside one, a Tx gives typed access to workspaces, sessions,
// handoffs, reservations, wakeups and continuations, with the indexes the
// rules need: the pending handoff of a workspace, a handoff by (workspace,
// request id), every pending handoff (O(pending)), sessions of a workspace in
// creation order, wakeups by pinned session, and due wakeups.
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
package store
