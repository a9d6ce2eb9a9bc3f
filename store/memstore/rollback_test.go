package memstore_test

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/store/storetest"
)

// TestRandomUpdates runs random Updates over a small key space, some of
// which fail after writing. A failed one must leave the store exactly as it
// was; after every step, every index must agree with the records.
func TestRandomUpdates(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := memstore.New()
		defer s.Close()
		boom := errors.New("boom")
		rt.Repeat(map[string]func(*rapid.T){
			"update": func(rt *rapid.T) {
				ops := rapid.SliceOfN(opGen(), 1, 6).Draw(rt, "ops")
				fail := rapid.Bool().Draw(rt, "fail")
				before := snapshotOf(rt, s)
				err := s.Update(rt.Context(), func(tx store.Tx) error {
					for _, op := range ops {
						_ = op.apply(tx) // refused writes must have no effect
					}
					if fail {
						return boom
					}
					return nil
				})
				if fail {
					if err != boom {
						rt.Fatalf("Update = %v, want boom", err)
					}
					if d := storetest.Diff(before, snapshotOf(rt, s)); d != "" {
						rt.Fatalf("failed Update changed the store (-before +after):\n%s", d)
					}
				} else if err != nil {
					rt.Fatalf("Update: %v", err)
				}
			},
			"": func(rt *rapid.T) { checkIndexes(rt, s) },
		})
	})
}

var (
	workspaces = []baton.WorkspaceID{"ws-a", "ws-b"}
	sessionIDs = []baton.SessionID{"", "s-0", "s-1", "s-2"}
)

type op struct {
	name  string
	apply func(tx store.Tx) error
}

// GoString makes rapid's report of a failing run name each op.
func (o op) GoString() string { return o.name }

func opGen() *rapid.Generator[op] {
	ws := rapid.SampledFrom(workspaces)
	when := rapid.Custom(func(t *rapid.T) time.Time {
		return time.Unix(int64(rapid.IntRange(0, 4).Draw(t, "at")), 0)
	})
	handoffState := rapid.SampledFrom([]store.HandoffState{
		store.StateStopping, store.StateGenerating, store.StateStarting, store.StateFailed,
		store.StateInterrupted, store.StateCompleted, store.StateCancelled,
	})
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) op {
			h := store.Handoff{
				ID:        baton.HandoffID(rapid.SampledFrom([]string{"h-0", "h-1", "h-2", "h-3"}).Draw(t, "id")),
				Workspace: ws.Draw(t, "ws"),
				RequestID: rapid.SampledFrom([]string{"r-0", "r-1", "r-2"}).Draw(t, "req"),
				State:     handoffState.Draw(t, "state"),
				History:   make([]store.AttemptRecord, rapid.IntRange(0, 2).Draw(t, "history")),
			}
			if rapid.Bool().Draw(t, "insert") {
				return op{fmt.Sprintf("PutHandoff %s %s %s %s", h.ID, h.Workspace, h.RequestID, h.State), func(tx store.Tx) error { return tx.PutHandoff(h) }}
			}
			return op{fmt.Sprintf("PutHandoff %s %s %s %s", h.ID, h.Workspace, h.RequestID, h.State), func(tx store.Tx) error { return tx.PutHandoff(h) }}
		}),
		rapid.Custom(func(t *rapid.T) op {
			s := store.Session{
				ID:        rapid.SampledFrom(sessionIDs[1:]).Draw(t, "id"),
				Workspace: ws.Draw(t, "ws"),
				Status:    rapid.SampledFrom([]store.SessionStatus{store.SessionIdle, store.SessionRunning}).Draw(t, "status"),
			}
			if rapid.Bool().Draw(t, "insert") {
				return op{fmt.Sprintf("PutSession %s %s %s", s.ID, s.Workspace, s.Status), func(tx store.Tx) error { err := tx.PutSession(s); return err }}
			}
			return op{fmt.Sprintf("PutSession %s %s %s", s.ID, s.Workspace, s.Status), func(tx store.Tx) error { return tx.PutSession(s) }}
		}),
		rapid.Custom(func(t *rapid.T) op {
			w := store.Wakeup{
				ID:        baton.WakeupID(rapid.SampledFrom([]string{"w-0", "w-1", "w-2", "w-3"}).Draw(t, "id")),
				Workspace: ws.Draw(t, "ws"),
				Session:   rapid.SampledFrom(sessionIDs).Draw(t, "session"),
				At:        when.Draw(t, "at"),
				Status:    rapid.SampledFrom([]store.WakeupStatus{store.WakeupPending, store.WakeupFired}).Draw(t, "status"),
			}
			if rapid.Bool().Draw(t, "insert") {
				return op{fmt.Sprintf("PutWakeup %s %s session=%q at=%d %s", w.ID, w.Workspace, w.Session, w.At.Unix(), w.Status), func(tx store.Tx) error { return tx.PutWakeup(w) }}
			}
			return op{fmt.Sprintf("PutWakeup %s %s session=%q at=%d %s", w.ID, w.Workspace, w.Session, w.At.Unix(), w.Status), func(tx store.Tx) error { return tx.PutWakeup(w) }}
		}),
		rapid.Custom(func(t *rapid.T) op {
			c := store.Continuation{
				ID:        baton.ContinuationID(rapid.SampledFrom([]string{"c-0", "c-1", "c-2"}).Draw(t, "id")),
				Workspace: ws.Draw(t, "ws"),
				State:     rapid.SampledFrom([]store.ContinuationState{store.ContinuationQueued, store.ContinuationStarted}).Draw(t, "state"),
			}
			if rapid.Bool().Draw(t, "insert") {
				return op{fmt.Sprintf("PutContinuation %s %s %s", c.ID, c.Workspace, c.State), func(tx store.Tx) error { return tx.PutContinuation(c) }}
			}
			return op{fmt.Sprintf("PutContinuation %s %s %s", c.ID, c.Workspace, c.State), func(tx store.Tx) error { return tx.PutContinuation(c) }}
		}),
		rapid.Custom(func(t *rapid.T) op {
			w := store.Workspace{ID: ws.Draw(t, "ws"), ActivationCounter: int64(rapid.IntRange(0, 3).Draw(t, "counter"))}
			r := store.Reservation{Workspace: w.ID, Epoch: w.ActivationCounter, Held: rapid.Bool().Draw(t, "held")}
			return op{fmt.Sprintf("Insert/PutWorkspace %s counter=%d, PutReservation held=%v", w.ID, w.ActivationCounter, r.Held), func(tx store.Tx) error {
				if err := tx.PutWorkspace(w); err != nil {
					return errors.Join(err, tx.PutWorkspace(w))
				}
				return tx.PutReservation(r)
			}}
		}),
	)
}

func snapshotOf(rt *rapid.T, s store.Store) storetest.Snapshot {
	snap, err := storetest.TakeSnapshot(rt.Context(), s, workspaces...)
	if err != nil {
		rt.Fatalf("TakeSnapshot: %v", err)
	}
	return snap
}

// checkIndexes derives every index from the per-workspace lists and
// compares it with what the store's own index returns.
func checkIndexes(rt *rapid.T, s store.Store) {
	snap := snapshotOf(rt, s)
	var pending []store.Handoff
	var due []store.Wakeup
	var queued []baton.ContinuationID
	type pin struct {
		ws baton.WorkspaceID
		s  baton.SessionID
	}
	bySession := map[pin][]store.Wakeup{}
	for _, ws := range workspaces {
		w := snap.ByWorkspace[ws]
		var slot []store.Handoff
		requests := map[string]bool{}
		for _, h := range w.Handoffs {
			if h.State.Pending() {
				slot = append(slot, h)
			}
			if requests[h.RequestID] {
				rt.Fatalf("%s: request id %q used twice", ws, h.RequestID)
			}
			requests[h.RequestID] = true
		}
		switch {
		case len(slot) > 1:
			rt.Fatalf("%s: %d pending handoffs", ws, len(slot))
		case len(slot) == 1 && (w.Pending == nil || w.Pending.ID != slot[0].ID):
			rt.Fatalf("%s: PendingHandoffs = %v, want %s", ws, w.Pending, slot[0].ID)
		case len(slot) == 0 && w.Pending != nil:
			rt.Fatalf("%s: PendingHandoffs = %s, want none", ws, w.Pending.ID)
		}
		pending = append(pending, slot...)
		if !slices.IsSortedFunc(w.Sessions, func(a, b store.Session) int { return cmp.Compare(a.Seq, b.Seq) }) {
			rt.Fatalf("%s: sessions not in Seq order: %v", ws, w.Sessions)
		}
		if !slices.IsSortedFunc(w.Wakeups, byAtID) {
			rt.Fatalf("%s: wakeups not in (At, ID) order: %v", ws, w.Wakeups)
		}
		for _, wk := range w.Wakeups {
			if wk.Status == store.WakeupPending {
				due = append(due, wk)
			}
			if wk.Session != "" {
				bySession[pin{ws, wk.Session}] = append(bySession[pin{ws, wk.Session}], wk)
			}
		}
		for _, c := range w.Continuations {
			if c.State == store.ContinuationQueued {
				queued = append(queued, c.ID)
			}
		}
	}
	slices.SortFunc(pending, func(a, b store.Handoff) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(due, byAtID)
	slices.Sort(queued)
	var gotQueued []baton.ContinuationID
	for _, c := range snap.Queued {
		gotQueued = append(gotQueued, c.ID)
	}
	slices.Sort(gotQueued)
	for what, pair := range map[string][2]any{
		"PendingHandoffs(\"\")": {pending, snap.Pending},
		"DueWakeups":            {due, snap.Due},
		"QueuedContinuations":   {queued, gotQueued},
	} {
		if d := storetest.Diff(pair[0], pair[1]); d != "" {
			rt.Fatalf("%s disagrees with the records (-derived +index):\n%s", what, d)
		}
	}
	err := s.View(rt.Context(), func(tx store.Tx) error {
		for _, ws := range workspaces {
			for _, id := range sessionIDs[1:] {
				want := bySession[pin{ws, id}]
				slices.SortFunc(want, byAtID)
				got, err := tx.ListWakeups(ws, id)
				if err != nil {
					return err
				}
				if d := storetest.Diff(want, got); d != "" {
					rt.Fatalf("ListWakeups(%s, %s) disagrees with the records (-derived +index):\n%s", ws, id, d)
				}
			}
		}
		return nil
	})
	if err != nil {
		rt.Fatalf("View: %v", err)
	}
}

func byAtID(a, b store.Wakeup) int {
	if c := a.At.Compare(b.At); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
