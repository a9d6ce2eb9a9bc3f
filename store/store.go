package store

import (
	"context"
	"time"

	"github.com/batonhq/baton"
)

// Errors every backend returns. They match with errors.Is, also against the
// root codes (ErrNotFound is a baton.ErrNotFound.Code, ErrDuplicate a
// baton.ErrConflict.Code).
var (
	// ErrNotFound: no record under that key.
	ErrNotFound = baton.NewError(baton.ErrNotFound, "store: not found")
	// ErrDuplicate: a Put would break a uniqueness rule: a second handoff
	// with the same (workspace, request id), or a second pending handoff in
	// a workspace.
	ErrDuplicate = baton.NewError(baton.ErrConflict, "store: duplicate")
	// ErrTxConflict: the transaction lost a serialization race and the
	// backend gave up retrying. Safe to retry the whole Update.
	ErrTxConflict = baton.NewError(baton.ErrUnavailable, "store: transaction conflict, retries exhausted")
	// ErrClosed: the store was closed.
	ErrClosed = baton.NewError(baton.ErrUnavailable, "store: closed")
	// ErrTxDone: a Tx method was called after the function it was given to
	// returned. The transaction is over and its Tx must not be kept: a
	// programming error, the same from every backend.
	ErrTxDone = baton.NewError(baton.ErrInternal, "store: transaction used after its function returned")
	// ErrFormat: what a backend opened is stored in a format this version
	// cannot read: written by a newer version, or not by baton (a badger
	// directory, a PostgreSQL schema). Nothing was changed.
	ErrFormat = baton.NewError(baton.ErrUnsupported, "store: unsupported format")
)

// Store is a transactional record store. Transactions are serializable: the
// outcome of concurrent Updates equals some serial order of them. (A
// backend may serialize per workspace instead, as store/pgstore does: its
// Updates of one workspace are serializable, and its reads across
// workspaces, such as PendingHandoffs(""), return what was committed when
// they ran; a function reads a record they return again by its key
// before it writes it back.)
type Store interface {
	// Update runs fn in a read-write transaction and commits if fn returns
	// nil. If fn returns an error, nothing fn wrote is kept and the error is
	// returned as is. fn may be called more than once when the backend
	// retries a serialization conflict, so it must have no effect outside
	// the transaction. The Tx must not be used after fn returns.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction over a consistent snapshot.
	// Writes change nothing and return an error matching baton.ErrInternal
	// (a bug of the caller).
	View(ctx context.Context, fn func(Tx) error) error
	// Close releases the store. Calls after Close return ErrClosed.
	Close() error
}

// Tx is typed access to records inside one transaction. Getters return
// ErrNotFound when nothing is there. Records are values: mutating a returned
// record changes nothing until it is written back. A Put inserts the record
// or replaces the one with its key; the lists that come "in insert order"
// keep the place of its first Put. Empty keys are refused with an error
// matching baton.ErrInvalid. Times are kept to the microsecond at least
// (PostgreSQL's precision); compare them with time.Time.Equal. A Tx
// carries the context given to Update or View: its methods take none, and
// a backend that does I/O uses that one.
type Tx interface {
	// GetWorkspace returns the workspace id.
	GetWorkspace(id baton.WorkspaceID) (Workspace, error)
	// PutWorkspace inserts or replaces w.
	PutWorkspace(w Workspace) error
	// ListWorkspaces returns every workspace.
	ListWorkspaces() ([]Workspace, error)

	// GetSession returns the session id.
	GetSession(id baton.SessionID) (Session, error)
	// PutSession inserts s with the next Seq of its workspace (whatever
	// s.Seq says), or replaces it keeping its stored Seq.
	PutSession(s Session) error
	// ListSessions returns a workspace's sessions in creation order.
	ListSessions(ws baton.WorkspaceID) ([]Session, error)

	// GetHandoff returns the handoff id.
	GetHandoff(id baton.HandoffID) (Handoff, error)
	// PutHandoff inserts or replaces h. ErrDuplicate if (workspace, request
	// id) is taken by another handoff, or if h is pending and another
	// handoff holds the workspace's pending slot; changing the workspace or
	// request id of a stored handoff is refused (baton.ErrInvalid).
	PutHandoff(h Handoff) error
	// HandoffByRequest is the (workspace, request id) index.
	HandoffByRequest(ws baton.WorkspaceID, requestID string) (Handoff, error)
	// PendingHandoffs returns the pending handoffs (State.Pending()) of
	// every workspace (ws == "") or of one: its pending slot, none or one
	// handoff. Either way in O(pending), never O(all handoffs).
	PendingHandoffs(ws baton.WorkspaceID) ([]Handoff, error)
	// ListHandoffs returns a workspace's handoffs, oldest first.
	ListHandoffs(ws baton.WorkspaceID) ([]Handoff, error)

	// GetReservation returns the workspace's reservation row (ErrNotFound
	// if never taken).
	GetReservation(ws baton.WorkspaceID) (Reservation, error)
	// PutReservation inserts or replaces the reservation of r.Workspace.
	PutReservation(r Reservation) error

	// GetWakeup returns the wakeup id.
	GetWakeup(id baton.WakeupID) (Wakeup, error)
	// PutWakeup inserts or replaces w.
	PutWakeup(w Wakeup) error
	// ListWakeups returns a workspace's wakeups, any status, ordered by
	// (At, ID); with pinned != "" only those pinned to session pinned, in
	// O(the session's wakeups), never O(the workspace's).
	ListWakeups(ws baton.WorkspaceID, pinned baton.SessionID) ([]Wakeup, error)
	// DueWakeups returns pending wakeups of every workspace with At <= now
	// ordered by (At, ID), at most limit (limit <= 0: no limit).
	DueWakeups(now time.Time, limit int) ([]Wakeup, error)

	// GetContinuation returns the continuation id.
	GetContinuation(id baton.ContinuationID) (Continuation, error)
	// PutContinuation inserts or replaces c.
	PutContinuation(c Continuation) error
	// QueuedContinuations returns continuations in state queued, oldest first.
	QueuedContinuations() ([]Continuation, error)
	// ListContinuations returns a workspace's continuations, oldest first.
	ListContinuations(ws baton.WorkspaceID) ([]Continuation, error)

	// GetLaunch returns the launch id.
	GetLaunch(id baton.LaunchID) (Launch, error)
	// PutLaunch inserts or replaces l.
	PutLaunch(l Launch) error
	// LiveLaunches returns the launches not Gone (live) of every
	// workspace (ws == "") or of one, oldest first, in O(live launches),
	// never O(all launches).
	LiveLaunches(ws baton.WorkspaceID) ([]Launch, error)

	// GetInstruction returns the instruction id.
	GetInstruction(id baton.InstructionID) (Instruction, error)
	// PutInstruction inserts or replaces i.
	PutInstruction(i Instruction) error
	// ListInstructions returns a workspace's instructions, oldest first.
	ListInstructions(ws baton.WorkspaceID) ([]Instruction, error)
	// OpenInstructions returns a workspace's open instructions (State
	// pending or unknown, InstructionState.Open), in ListInstructions'
	// order, in O(open instructions), never O(all instructions): what the
	// delivery of the next instruction and a transfer's briefing read, on
	// every turn, of a workspace that may have been sent thousands.
	OpenInstructions(ws baton.WorkspaceID) ([]Instruction, error)

	// Changes returns the workspace's change feed after seq after, in
	// ascending Seq, at most limit entries (limit <= 0: no limit). The
	// backend appends to the feed by itself: every PutHandoff, PutSession
	// and PutInstruction of a committed transaction leaves exactly one Change
	// per record (its last value in that transaction), numbered after
	// every change committed before it. Inside an Update, the changes of
	// the transaction itself are not listed.
	Changes(ws baton.WorkspaceID, after int64, limit int) ([]Change, error)
	// LastSeq returns the workspace's highest committed change Seq (0 when
	// it has none).
	LastSeq(ws baton.WorkspaceID) (int64, error)
}

// Notifier is an optional Store capability: it tells subscribers, in
// process or across processes (PostgreSQL's LISTEN/NOTIFY), that a
// workspace's change feed grew. A notification is only a wake-up: read the
// feed (Tx.Changes) to learn what changed. Without it, a reader polls.
type Notifier interface {
	// Subscribe returns a channel that receives a value after each commit
	// that appends changes to workspace ws (ws == "": any workspace),
	// coalesced (capacity 1, never blocking the committer), and a function
	// that ends the subscription (idempotent). A notification may be
	// spurious; none is lost between Subscribe returning and cancel.
	Subscribe(ws baton.WorkspaceID) (ch <-chan struct{}, cancel func())
}
