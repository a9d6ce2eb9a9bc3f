package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var handoffTests = []testCase{
	{"PendingSlotFollowsState", testPendingSlotFollowsState},
	{"PendingLifecycle", testPendingLifecycle},
	{"PendingSlotUnique", testPendingSlotUnique},
	{"RequestIDUniqueForever", testRequestIDUniqueForever},
	{"PutCannotMoveKeys", testPutCannotMoveKeys},
	{"ListHandoffsOldestFirst", testListHandoffsOrder},
	{"ListPendingAcrossWorkspaces", testListPendingAcrossWorkspaces},
}

// pendingOf returns the one handoff PendingHandoffs(ws) lists, or an error
// matching store.ErrNotFound when it lists none; listing more than one, or
// one of another workspace, is an error.
func pendingOf(tx store.Tx, ws baton.WorkspaceID) (store.Handoff, error) {
	l, err := tx.PendingHandoffs(ws)
	switch {
	case err != nil:
		return store.Handoff{}, err
	case len(l) == 0:
		return store.Handoff{}, fmt.Errorf("PendingHandoffs(%s) lists none: %w", ws, store.ErrNotFound)
	case len(l) > 1 || l[0].Workspace != ws:
		return store.Handoff{}, fmt.Errorf("PendingHandoffs(%s) = %+v; want at most one, of %s", ws, l, ws)
	}
	return l[0], nil
}

// pendingIDs returns the ids of PendingHandoffs(""), sorted.
func pendingIDs(t *testing.T, tx store.Tx) []baton.HandoffID {
	t.Helper()
	l, err := tx.PendingHandoffs("")
	if err != nil {
		t.Fatalf(`PendingHandoffs(""): %v`, err)
	}
	ids := make([]baton.HandoffID, len(l))
	for i, h := range l {
		ids[i] = h.ID
	}
	slices.Sort(ids)
	return ids
}

// wantPending checks PendingHandoffs(ws) (empty want: the slot is free) and
// the whole pending list.
func wantPending(t *testing.T, s store.Store, ws baton.WorkspaceID, want baton.HandoffID, list ...baton.HandoffID) {
	t.Helper()
	View(t, s, func(tx store.Tx) error {
		p, err := pendingOf(tx, ws)
		switch {
		case want == "":
			wantNotFound(t, fmt.Sprintf("PendingHandoffs(%s)", ws), err)
		case err != nil || p.ID != want:
			t.Errorf("PendingHandoffs(%s) = %q, %v; want %q", ws, p.ID, err, want)
		}
		slices.Sort(list)
		diff(t, `PendingHandoffs("") ids`, list, pendingIDs(t, tx))
		return nil
	})
}

func testPendingSlotFollowsState(t *testing.T, s store.Store) {
	var pending []baton.HandoffID
	for i, st := range allHandoffStates {
		ws := baton.WorkspaceID(fmt.Sprintf("ws-%d", i))
		id := baton.HandoffID(fmt.Sprintf("h-%d", i))
		Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff(ws, id, "r", st)) })
		if st.Pending() {
			pending = append(pending, id)
		}
	}
	View(t, s, func(tx store.Tx) error {
		for i, st := range allHandoffStates {
			ws := baton.WorkspaceID(fmt.Sprintf("ws-%d", i))
			p, err := pendingOf(tx, ws)
			if st.Pending() && (err != nil || p.ID != baton.HandoffID(fmt.Sprintf("h-%d", i))) {
				t.Errorf("state %q: PendingHandoffs = %q, %v; want the handoff (the state is pending)", st, p.ID, err)
			}
			if !st.Pending() {
				wantNotFound(t, fmt.Sprintf("state %q: PendingHandoffs", st), err)
			}
		}
		slices.Sort(pending)
		diff(t, `PendingHandoffs("") ids`, pending, pendingIDs(t, tx))
		return nil
	})
}

// testPendingLifecycle walks one handoff through pending states to a
// terminal one, then checks that writes of the terminal row never bring it
// back into the slot or the list.
func testPendingLifecycle(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-b", "h-b", "r-b", store.StateStarting)) })
	h := handoff("ws-a", "h-1", "r-1", store.StateStopping)
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
	wantPending(t, s, "ws-a", "h-1", "h-1", "h-b")
	for _, st := range []store.HandoffState{store.StateGenerating, store.StateFailed, store.StateInterrupted, store.StateStopping, store.StateStarting} {
		h.State = st
		h.Attempt++
		Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
		wantPending(t, s, "ws-a", "h-1", "h-1", "h-b")
	}
	h.State = store.StateCompleted
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
	wantPending(t, s, "ws-a", "", "h-b")

	// A later write of the terminal row (a report, an error text) leaves it
	// out, also once another handoff holds the slot.
	h.Report = "written after completion"
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
	wantPending(t, s, "ws-a", "", "h-b")
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-a", "h-2", "r-2", store.StateStopping)) })
	h.Error = "another late write"
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
	wantPending(t, s, "ws-a", "h-2", "h-2", "h-b")
	View(t, s, func(tx store.Tx) error {
		got, err := tx.GetHandoff("h-1")
		if err != nil {
			return err
		}
		diff(t, "h-1", h, got)
		return nil
	})
}

func testPendingSlotUnique(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-a", "h-1", "r-1", store.StateGenerating)) })
	before := snapshot(t, s, "ws-a", "ws-b")
	Update(t, s, func(tx store.Tx) error {
		err := tx.PutHandoff(handoff("ws-a", "h-2", "r-2", store.StateStopping))
		wantErr(t, "PutHandoff(second pending)", err, store.ErrDuplicate, baton.ErrConflict)
		return nil
	})
	diff(t, "store after a refused PutHandoff", before, snapshot(t, s, "ws-a", "ws-b"))

	// A terminal handoff needs no slot; it cannot become pending by Put.
	done := handoff("ws-a", "h-3", "r-3", store.StateCancelled)
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(done) })
	before = snapshot(t, s, "ws-a", "ws-b")
	Update(t, s, func(tx store.Tx) error {
		p := done
		p.State = store.StateStopping
		wantErr(t, "PutHandoff(terminal -> pending) while the slot is held", tx.PutHandoff(p), store.ErrDuplicate, baton.ErrConflict)
		return nil
	})
	diff(t, "store after a refused PutHandoff", before, snapshot(t, s, "ws-a", "ws-b"))

	// Other workspaces have their own slot.
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-b", "h-4", "r-1", store.StateStopping)) })
	wantPending(t, s, "ws-b", "h-4", "h-1", "h-4")
	wantPending(t, s, "ws-a", "h-1", "h-1", "h-4")
}

func testRequestIDUniqueForever(t *testing.T, s store.Store) {
	h := handoff("ws-a", "h-1", "r-1", store.StateStopping)
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
	for _, st := range []store.HandoffState{store.StateStopping, store.StateCompleted, store.StateCancelled} {
		if h.State != st {
			h.State = st
			Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
		}
		before := snapshot(t, s, "ws-a")
		Update(t, s, func(tx store.Tx) error {
			for _, dupState := range []store.HandoffState{store.StateCompleted, store.StateStopping} {
				err := tx.PutHandoff(handoff("ws-a", "h-2", "r-1", dupState))
				wantErr(t, fmt.Sprintf("PutHandoff(%s, same request id) while the first is %s", dupState, st), err, store.ErrDuplicate, baton.ErrConflict)
			}
			got, err := tx.HandoffByRequest("ws-a", "r-1")
			if err != nil {
				return err
			}
			diff(t, "HandoffByRequest(ws-a, r-1) while "+string(st), h, got)
			return nil
		})
		diff(t, "store after a refused PutHandoff", before, snapshot(t, s, "ws-a"))
	}
	// The same request id in another workspace, and another id in this one,
	// are free.
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-b", "h-2", "r-1", store.StateStopping)) })
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-a", "h-3", "r-3", store.StateStopping)) })
	View(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			ws   baton.WorkspaceID
			req  string
			want baton.HandoffID
		}{{"ws-a", "r-1", "h-1"}, {"ws-b", "r-1", "h-2"}, {"ws-a", "r-3", "h-3"}, {"ws-b", "r-3", ""}, {"ws-c", "r-1", ""}} {
			got, err := tx.HandoffByRequest(c.ws, c.req)
			if c.want == "" {
				wantNotFound(t, fmt.Sprintf("HandoffByRequest(%s, %s)", c.ws, c.req), err)
			} else if err != nil || got.ID != c.want {
				t.Errorf("HandoffByRequest(%s, %s) = %q, %v; want %q", c.ws, c.req, got.ID, err, c.want)
			}
		}
		return nil
	})
}

func testPutCannotMoveKeys(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(handoff("ws-a", "h-1", "r-1", store.StateStopping)) })
	before := snapshot(t, s, "ws-a", "ws-b")
	for _, c := range []struct {
		name string
		ws   baton.WorkspaceID
		req  string
	}{{"workspace", "ws-b", "r-1"}, {"request id", "ws-a", "r-2"}, {"both", "ws-b", "r-2"}} {
		Update(t, s, func(tx store.Tx) error {
			err := tx.PutHandoff(handoff(c.ws, "h-1", c.req, store.StateStopping))
			wantErr(t, "PutHandoff changing the "+c.name, err, baton.ErrInvalid)
			return nil
		})
	}
	diff(t, "store after refused PutHandoffs", before, snapshot(t, s, "ws-a", "ws-b"))
	View(t, s, func(tx store.Tx) error {
		_, err := tx.HandoffByRequest("ws-a", "r-2")
		wantNotFound(t, "HandoffByRequest(ws-a, r-2)", err)
		_, err = tx.HandoffByRequest("ws-b", "r-1")
		wantNotFound(t, "HandoffByRequest(ws-b, r-1)", err)
		return nil
	})
}

func testListHandoffsOrder(t *testing.T, s store.Store) {
	// Ids out of alphabetical order and a creation time that grows with
	// insertion: "oldest first" must follow creation, not ids.
	ids := []baton.HandoffID{"h-c", "h-a", "h-e", "h-b", "h-d"}
	var want []store.Handoff
	for i, id := range ids {
		h := handoff("ws-a", id, "r-"+string(id), store.StateCompleted)
		h.CreatedAt, h.UpdatedAt = at(10+i), at(10+i)
		want = append(want, h)
		Update(t, s, func(tx store.Tx) error {
			if i == 2 { // interleave another workspace
				if err := tx.PutHandoff(handoff("ws-b", "h-x", "r-x", store.StateStopping)); err != nil {
					return err
				}
			}
			return tx.PutHandoff(h)
		})
	}
	// A write keeps a handoff's place.
	want[1].State, want[1].Report = store.StateCancelled, "late"
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(want[1]) })
	View(t, s, func(tx store.Tx) error {
		got, err := tx.ListHandoffs("ws-a")
		if err != nil {
			return err
		}
		diff(t, "ListHandoffs(ws-a)", want, got)
		got, err = tx.ListHandoffs("ws-none")
		if err != nil || len(got) != 0 {
			t.Errorf("ListHandoffs(ws-none) = %v, %v; want none and no error", got, err)
		}
		return nil
	})
}

func testListPendingAcrossWorkspaces(t *testing.T, s store.Store) {
	var want []store.Handoff
	Update(t, s, func(tx store.Tx) error {
		for i := range 4 {
			ws := baton.WorkspaceID(fmt.Sprintf("ws-%d", i))
			done := handoff(ws, baton.HandoffID(fmt.Sprintf("h-%d-done", i)), "done", store.StateCompleted)
			if err := tx.PutHandoff(done); err != nil {
				return err
			}
			if i == 3 {
				continue // a workspace with only a terminal handoff
			}
			p := handoff(ws, baton.HandoffID(fmt.Sprintf("h-%d", i)), "live", allHandoffStates[1+i])
			want = append(want, p)
			if err := tx.PutHandoff(p); err != nil {
				return err
			}
		}
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		got, err := tx.PendingHandoffs("")
		if err != nil {
			return err
		}
		slices.SortFunc(got, func(a, b store.Handoff) int { return cmp.Compare(a.ID, b.ID) })
		diff(t, `PendingHandoffs("") (sorted by id)`, want, got)
		return nil
	})
}
