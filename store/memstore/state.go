package memstore

import (
	"cmp"
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/internal/backend"
	"github.com/batonhq/baton/store/internal/records"
)

// state is the committed data and its indexes. Every record kind is a
// table whose put and (for inserts' undo) delete keep its indexes exact,
// so that replaying inverses restores them too.
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
	queued        map[baton.ContinuationID]struct{}

	launches table[baton.LaunchID, store.Launch]
	// live holds the live launches, liveByWS the same by workspace, so
	// LiveLaunches reads only what it returns.
	live     map[baton.LaunchID]struct{}
	liveByWS index[baton.WorkspaceID, baton.LaunchID]

	instructions table[baton.InstructionID, store.Instruction]
	instrByWS    index[baton.WorkspaceID, baton.InstructionID]
	openByWS     index[baton.WorkspaceID, baton.InstructionID] // the open ones (InstructionState.Open)

	// feed is each workspace's change feed: Seq n at index n-1. Only a
	// commit appends to it (see tx.changes), so a rollback has nothing to
	// undo here.
	feed map[baton.WorkspaceID][]store.Change
}

// init makes the maps of a state never written (a zero or closed Store).
func (s *state) init() {
	if s.workspaces.rows != nil {
		return
	}
	s.workspaces = newTable[baton.WorkspaceID](nil, func(w store.Workspace) store.Workspace { return records.Workspace(w, noNorm) })
	s.reservations = newTable[baton.WorkspaceID, store.Reservation](nil, nil)
	s.sessions = newTable[baton.SessionID](s.indexSession, nil)
	s.sessionsByWS = index[baton.WorkspaceID, baton.SessionID]{}
	s.handoffs = newTable[baton.HandoffID](s.indexHandoff, outHandoff)
	s.handoffsByWS = index[baton.WorkspaceID, baton.HandoffID]{}
	s.byRequest = map[requestKey]baton.HandoffID{}
	s.pending = map[baton.WorkspaceID]baton.HandoffID{}
	s.wakeups = newTable[baton.WakeupID](s.indexWakeup, nil)
	s.wakeupsBySession = index[baton.SessionID, baton.WakeupID]{}
	s.wakeupsByWS = index[baton.WorkspaceID, baton.WakeupID]{}
	s.continuations = newTable[baton.ContinuationID](s.indexContinuation, nil)
	s.contsByWS = index[baton.WorkspaceID, baton.ContinuationID]{}
	s.queued = map[baton.ContinuationID]struct{}{}
	s.launches = newTable[baton.LaunchID](s.indexLaunch, nil)
	s.live = map[baton.LaunchID]struct{}{}
	s.liveByWS = index[baton.WorkspaceID, baton.LaunchID]{}
	s.instructions = newTable[baton.InstructionID](s.indexInstruction, nil)
	s.instrByWS = index[baton.WorkspaceID, baton.InstructionID]{}
	s.openByWS = index[baton.WorkspaceID, baton.InstructionID]{}
	s.feed = map[baton.WorkspaceID][]store.Change{}
}

// table holds the records of one kind by id, each with its insert number
// (0 for a kind whose inserts are not numbered). reindex adds the index
// entries of a record (in) or removes them; out copies a stored record
// for a caller (nil: the value itself is a copy).
type table[K ~string, R any] struct {
	rows    map[K]row[R]
	reindex func(r R, in bool)
	out     func(R) R
}

type row[R any] struct {
	r   R
	seq int64
}

func newTable[K ~string, R any](reindex func(R, bool), out func(R) R) table[K, R] {
	return table[K, R]{rows: map[K]row[R]{}, reindex: reindex, out: out}
}

// put stores r under id, moving its index entries.
func (tb *table[K, R]) put(id K, r row[R]) {
	tb.delete(id)
	tb.rows[id] = r
	if tb.reindex != nil {
		tb.reindex(r.r, true)
	}
}

// delete removes id and its index entries.
func (tb *table[K, R]) delete(id K) {
	cur, ok := tb.rows[id]
	if !ok {
		return
	}
	if tb.reindex != nil {
		tb.reindex(cur.r, false)
	}
	delete(tb.rows, id)
}

// copy returns r as a caller gets it.
func (tb *table[K, R]) copy(r R) R {
	if tb.out == nil {
		return r
	}
	return tb.out(r)
}

// list returns the records of ids (each copied out), sorted by order.
func (tb *table[K, R]) list(ids map[K]struct{}, order func(a, b row[R]) int) []R {
	if len(ids) == 0 {
		return nil
	}
	rows := make([]row[R], 0, len(ids))
	for id := range ids {
		rows = append(rows, tb.rows[id])
	}
	return tb.sorted(rows, order)
}

// listed returns the records of ids in tb (each copied out), sorted by
// order, in a transaction that is still readable.
func listed[K ~string, R any](t *tx, tb *table[K, R], ids map[K]struct{}, order func(a, b row[R]) int) ([]R, error) {
	if err := t.readable(); err != nil {
		return nil, err
	}
	return tb.list(ids, order), nil
}

// sorted sorts rows by order and copies their records out.
func (tb *table[K, R]) sorted(rows []row[R], order func(a, b row[R]) int) []R {
	if len(rows) == 0 {
		return nil
	}
	slices.SortFunc(rows, order)
	out := make([]R, len(rows))
	for i, r := range rows {
		out[i] = tb.copy(r.r)
	}
	return out
}

// bySeq orders rows by insert number.
func bySeq[R any](a, b row[R]) int { return cmp.Compare(a.seq, b.seq) }

// get returns the record id of tb for the caller; store.ErrNotFound
// (naming kind) if absent.
func get[K ~string, R any](t *tx, tb *table[K, R], kind string, id K) (R, error) {
	if err := t.readable(); err != nil {
		return *new(R), err
	}
	r, ok := tb.rows[id]
	if !ok {
		return *new(R), backend.NotFound(pkg, kind, id)
	}
	return tb.copy(r.r), nil
}

// insertSeq is the insert number of the record id of tb: its own if it is
// stored, else the next one.
func insertSeq[K ~string, R any](t *tx, tb *table[K, R], id K) int64 {
	if cur, ok := tb.rows[id]; ok {
		return cur.seq
	}
	return t.st.nextSeq()
}

// write stores r under id in tb with insert number seq, noting how to undo
// it: put back what was there, or delete what was not.
func write[K ~string, R any](t *tx, tb *table[K, R], id K, r R, seq int64) {
	if old, ok := tb.rows[id]; ok {
		t.onUndo(func() { tb.put(id, old) })
	} else {
		t.onUndo(func() { tb.delete(id) })
	}
	tb.put(id, row[R]{r, seq})
}

// nextSeq returns the next insert number (the first is 1).
func (s *state) nextSeq() int64 {
	s.seq++
	return s.seq
}

// index maps a key to a set of record ids.
type index[K, V comparable] map[K]map[V]struct{}

// set adds v to the set of k (in) or removes it.
func (x index[K, V]) set(k K, v V, in bool) {
	s := x[k]
	switch {
	case in && s == nil:
		x[k] = map[V]struct{}{v: {}}
	case in:
		s[v] = struct{}{}
	default:
		delete(s, v)
		if len(s) == 0 {
			delete(x, k)
		}
	}
}

// member adds k to m (in) or removes it.
func member[K comparable](m map[K]struct{}, k K, in bool) {
	if in {
		m[k] = struct{}{}
	} else {
		delete(m, k)
	}
}

// noNorm keeps a time as it is: the Norm of a copy made for a caller.
func noNorm(t time.Time) time.Time { return t }
