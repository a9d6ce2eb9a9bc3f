package memstore

import (
	"cmp"
	"iter"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// state is the committed data and its indexes. Every record kind is a
// table whose put and (for inserts' undo) delete keep its indexes exact
// (reindex), so that replaying inverses restores them too. The zero state
// is empty: its maps are made by the first write that needs them.
type state struct {
	// seq numbers inserts of sessions, handoffs, continuations, launches
	// and instructions: it gives Session.Seq and the creation order of the
	// others.
	seq int64

	workspaces   table[baton.WorkspaceID, store.Workspace]
	reservations table[baton.WorkspaceID, store.Reservation]

	sessions     table[baton.SessionID, store.Session]
	sessionsByWS index[baton.WorkspaceID, baton.SessionID]

	handoffs     table[baton.HandoffID, store.Handoff]
	handoffsByWS index[baton.WorkspaceID, baton.HandoffID]
	byRequest    map[requestKey]baton.HandoffID
	pending      map[baton.WorkspaceID]baton.HandoffID

	wakeups          table[baton.WakeupID, store.Wakeup]
	wakeupsBySession index[baton.SessionID, baton.WakeupID]
	wakeupsByWS      index[baton.WorkspaceID, baton.WakeupID]
	// due holds the pending wakeups sorted by (At, ID), so DueWakeups reads
	// only what it returns.
	due []wakeupKey

	continuations table[baton.ContinuationID, store.Continuation]
	contsByWS     index[baton.WorkspaceID, baton.ContinuationID]
	queued        set[baton.ContinuationID]

	launches table[baton.LaunchID, store.Launch]
	// live holds the live launches, liveByWS the same by workspace, so
	// LiveLaunches reads only what it returns.
	live     set[baton.LaunchID]
	liveByWS index[baton.WorkspaceID, baton.LaunchID]

	instructions table[baton.InstructionID, store.Instruction]
	instrByWS    index[baton.WorkspaceID, baton.InstructionID]
	openByWS     index[baton.WorkspaceID, baton.InstructionID] // the open ones (InstructionState.Open)

	// feed is each workspace's change feed: Seq n at index n-1. Only a
	// commit appends to it (see tx.commit), so a rollback has nothing to
	// undo here.
	feed map[baton.WorkspaceID][]store.Change
}

// reindex adds the index entries of the record r (in) or removes them.
// Workspaces and reservations have none.
func (s *state) reindex(r any, in bool) {
	switch r := r.(type) {
	case store.Session:
		s.sessionsByWS.set(r.Workspace, r.ID, in)
	case store.Handoff:
		s.indexHandoff(r, in)
	case store.Wakeup:
		s.indexWakeup(r, in)
	case store.Continuation:
		s.contsByWS.set(r.Workspace, r.ID, in)
		s.queued.set(r.ID, in && r.State == store.ContinuationQueued)
	case store.Launch:
		s.indexLaunch(r, in)
	case store.Instruction:
		s.indexInstruction(r, in)
	}
}

// table holds the records of one kind by id, each with its insert number
// (0 for a kind whose inserts are not numbered).
type table[K ~string, R any] map[K]row[R]

type row[R any] struct {
	r   R
	seq int64
}

// put stores r under id, moving its index entries.
func (tb *table[K, R]) put(s *state, id K, r row[R]) {
	tb.delete(s, id)
	if *tb == nil {
		*tb = table[K, R]{}
	}
	(*tb)[id] = r
	s.reindex(r.r, true)
}

// delete removes id and its index entries.
func (tb *table[K, R]) delete(s *state, id K) {
	if cur, ok := (*tb)[id]; ok {
		s.reindex(cur.r, false)
		delete(*tb, id)
	}
}

// clone copies a stored record for a caller, who may then change its
// slices (Workspace.Running, Handoff.History) freely.
func clone[R any](r R) R {
	switch v := any(r).(type) {
	case store.Workspace:
		return any(records.Workspace(v, noNorm)).(R)
	case store.Handoff:
		return any(records.Handoff(v, noNorm)).(R)
	}
	return r
}

// list returns the records of ids in tb, copied out and sorted by order,
// in a transaction that is still readable.
func list[K ~string, R any](t *tx, tb table[K, R], ids iter.Seq[K], order func(a, b row[R]) int) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	var rows []row[R]
	for id := range ids {
		rows = append(rows, tb[id])
	}
	slices.SortFunc(rows, order)
	var rs []R
	for _, r := range rows {
		rs = append(rs, clone(r.r))
	}
	return rs, nil
}

// bySeq orders rows by insert number.
func bySeq[R any](a, b row[R]) int { return cmp.Compare(a.seq, b.seq) }

// get returns the record id of tb for the caller; store.ErrNotFound
// (naming kind) if absent.
func get[K ~string, R any](t *tx, tb table[K, R], kind string, id K) (R, error) {
	var zero R
	if err := t.readable(); err != nil {
		return zero, err
	}
	r, ok := tb[id]
	if !ok {
		return zero, backend.NotFound(pkg, kind, id)
	}
	return clone(r.r), nil
}

// insertSeq is the insert number of the record id of tb: its own if it is
// stored, else the next one (the first is 1).
func insertSeq[K ~string, R any](t *tx, tb table[K, R], id K) int64 {
	if cur, ok := tb[id]; ok {
		return cur.seq
	}
	t.st.seq++
	return t.st.seq
}

// write stores r under id in tb with insert number seq, noting how to undo
// it: put back what was there, or delete what was not.
func write[K ~string, R any](t *tx, tb *table[K, R], id K, r R, seq int64) {
	s := t.st
	if old, ok := (*tb)[id]; ok {
		t.onUndo(func() { tb.put(s, id, old) })
	} else {
		t.onUndo(func() { tb.delete(s, id) })
	}
	tb.put(s, id, row[R]{r, seq})
}

// set is a set of record ids.
type set[K comparable] map[K]struct{}

// set adds k (in) or removes it.
func (s *set[K]) set(k K, in bool) {
	switch {
	case in && *s == nil:
		*s = set[K]{k: {}}
	case in:
		(*s)[k] = struct{}{}
	default:
		delete(*s, k)
	}
}

// index maps a key to a set of record ids.
type index[K, V comparable] map[K]set[V]

// set adds v to the set of k (in) or removes it.
func (x *index[K, V]) set(k K, v V, in bool) {
	if *x == nil {
		*x = index[K, V]{}
	}
	s := (*x)[k]
	s.set(v, in)
	if len(s) == 0 {
		delete(*x, k)
	} else {
		(*x)[k] = s
	}
}

// noNorm keeps a time as it is: the Norm of a copy made for a caller.
func noNorm(t time.Time) time.Time { return t }
