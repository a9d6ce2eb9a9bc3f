package memstore

import (
	"slices"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// state is the committed data and its indexes. Every record kind has one
// put and (for inserts' undo) one delete method that keeps its indexes
// exact, so that replaying inverses restores them too.
type state struct {
	// seq numbers inserts of sessions, handoffs, continuations, launches
	// and instructions: it gives Session.Seq and the creation order of the
	// others.
	seq int64

	workspaces   map[baton.WorkspaceID]store.Workspace
	reservations map[baton.WorkspaceID]store.Reservation

	sessions     map[baton.SessionID]store.Session
	sessionsByWS index[baton.WorkspaceID, baton.SessionID]

	handoffs     map[baton.HandoffID]handoffRow
	handoffsByWS index[baton.WorkspaceID, baton.HandoffID]
	byRequest    map[requestKey]baton.HandoffID
	pending      map[baton.WorkspaceID]baton.HandoffID

	wakeups          map[baton.WakeupID]store.Wakeup
	wakeupsBySession index[baton.SessionID, baton.WakeupID]
	wakeupsByWS      index[baton.WorkspaceID, baton.WakeupID]
	// due holds the pending wakeups sorted by (At, ID), so DueWakeups reads
	// only what it returns.
	due []wakeupKey

	continuations map[baton.ContinuationID]continuationRow
	contsByWS     index[baton.WorkspaceID, baton.ContinuationID]
	queued        map[baton.ContinuationID]struct{}

	launches map[baton.LaunchID]launchRow
	// live holds the live launches, liveByWS the same by workspace, so
	// LiveLaunches reads only what it returns.
	live     map[baton.LaunchID]struct{}
	liveByWS index[baton.WorkspaceID, baton.LaunchID]

	instructions map[baton.InstructionID]instructionRow
	instrByWS    index[baton.WorkspaceID, baton.InstructionID]
	openByWS     index[baton.WorkspaceID, baton.InstructionID] // the open ones (InstructionState.Open)

	// feed is each workspace's change feed: Seq n at index n-1. Only a
	// commit appends to it (see tx.changes), so a rollback has nothing to
	// undo here.
	feed map[baton.WorkspaceID][]store.Change
}

// init makes the maps of a state never written (a zero or closed Store).
func (s *state) init() {
	if s.workspaces != nil {
		return
	}
	s.workspaces = map[baton.WorkspaceID]store.Workspace{}
	s.reservations = map[baton.WorkspaceID]store.Reservation{}
	s.sessions = map[baton.SessionID]store.Session{}
	s.sessionsByWS = index[baton.WorkspaceID, baton.SessionID]{}
	s.handoffs = map[baton.HandoffID]handoffRow{}
	s.handoffsByWS = index[baton.WorkspaceID, baton.HandoffID]{}
	s.byRequest = map[requestKey]baton.HandoffID{}
	s.pending = map[baton.WorkspaceID]baton.HandoffID{}
	s.wakeups = map[baton.WakeupID]store.Wakeup{}
	s.wakeupsBySession = index[baton.SessionID, baton.WakeupID]{}
	s.wakeupsByWS = index[baton.WorkspaceID, baton.WakeupID]{}
	s.continuations = map[baton.ContinuationID]continuationRow{}
	s.contsByWS = index[baton.WorkspaceID, baton.ContinuationID]{}
	s.queued = map[baton.ContinuationID]struct{}{}
	s.launches = map[baton.LaunchID]launchRow{}
	s.live = map[baton.LaunchID]struct{}{}
	s.liveByWS = index[baton.WorkspaceID, baton.LaunchID]{}
	s.instructions = map[baton.InstructionID]instructionRow{}
	s.instrByWS = index[baton.WorkspaceID, baton.InstructionID]{}
	s.openByWS = index[baton.WorkspaceID, baton.InstructionID]{}
	s.feed = map[baton.WorkspaceID][]store.Change{}
}

// nextSeq returns the next insert number (the first is 1).
func (s *state) nextSeq() int64 {
	s.seq++
	return s.seq
}

// index maps a key to a set of record ids.
type index[K, V comparable] map[K]map[V]struct{}

func (x index[K, V]) add(k K, v V) {
	set := x[k]
	if set == nil {
		set = map[V]struct{}{}
		x[k] = set
	}
	set[v] = struct{}{}
}

func (x index[K, V]) remove(k K, v V) {
	set := x[k]
	delete(set, v)
	if len(set) == 0 {
		delete(x, k)
	}
}

// collect returns the records of ids, sorted by cmp.
func collect[V comparable, R any](ids map[V]struct{}, get func(V) R, less func(a, b R) int) []R {
	if len(ids) == 0 {
		return nil
	}
	out := make([]R, 0, len(ids))
	for id := range ids {
		out = append(out, get(id))
	}
	slices.SortFunc(out, less)
	return out
}

// noNorm keeps a time as it is: the Norm of a copy made for a caller.
func noNorm(t time.Time) time.Time { return t }
