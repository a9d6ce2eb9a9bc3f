package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var indexTests = []testCase{
	{"SessionsInCreationOrder", testSessionsOrder},
	{"WakeupsOrderedByAtID", testWakeupsOrder},
	{"DueWakeups", testDueWakeups},
	{"WakeupIndexesFollowPut", testWakeupIndexesFollowPut},
	{"Continuations", testContinuations},
	{"ListWorkspaces", testListWorkspaces},
	{"LiveLaunches", testLiveLaunches},
	{"Instructions", testInstructions},
	{"OpenInstructions", testOpenInstructions},
}

func testSessionsOrder(t *testing.T, s store.Store) {
	// Ids out of order, and a caller-set Seq the store must overwrite.
	ids := []baton.SessionID{"s-c", "s-a", "s-d", "s-b"}
	var want []store.Session
	for i, id := range ids {
		in := session("ws-a", id)
		in.Seq = int64(100 - i)
		Update(t, s, func(tx store.Tx) error {
			if i == 1 { // interleave another workspace
				if err := tx.PutSession(session("ws-b", "s-x")); err != nil {
					return err
				}
			}
			got, err := putSession(tx, in)
			if err != nil {
				return err
			}
			in.Seq = got.Seq
			diff(t, "PutSession, then GetSession", in, got)
			stored, err := tx.GetSession(id)
			if err != nil {
				return err
			}
			diff(t, "GetSession after PutSession", got, stored)
			want = append(want, got)
			return nil
		})
	}
	// Two in one transaction keep their order too.
	Update(t, s, func(tx store.Tx) error {
		for _, id := range []baton.SessionID{"s-f", "s-e"} {
			got, err := putSession(tx, session("ws-a", id))
			if err != nil {
				return err
			}
			want = append(want, got)
		}
		return nil
	})
	for i := 1; i < len(want); i++ {
		if want[i].Seq <= want[i-1].Seq {
			t.Errorf("Seq of %s (%d) not above Seq of %s (%d), created earlier", want[i].ID, want[i].Seq, want[i-1].ID, want[i-1].Seq)
		}
	}
	// A Put of a read record keeps its place and Seq.
	Update(t, s, func(tx store.Tx) error {
		got, err := tx.GetSession("s-a")
		if err != nil {
			return err
		}
		got.Status, got.NativeID, got.StartedAt = store.SessionRunning, "native-a", at(20)
		want[1] = got
		return tx.PutSession(got)
	})
	View(t, s, func(tx store.Tx) error {
		got, err := tx.ListSessions("ws-a")
		if err != nil {
			return err
		}
		diff(t, "ListSessions(ws-a)", want, got)
		got, err = tx.ListSessions("ws-none")
		if err != nil || len(got) != 0 {
			t.Errorf("ListSessions(ws-none) = %v, %v; want none and no error", got, err)
		}
		return nil
	})
}

// wakeupIDs returns the ids of l, in order.
func wakeupIDs(l []store.Wakeup) []baton.WakeupID {
	ids := make([]baton.WakeupID, len(l))
	for i, w := range l {
		ids[i] = w.ID
	}
	return ids
}

// insertWakeups inserts the wakeups of wakeupFixture (in the order given,
// which is neither the (At, ID) order nor the id order).
func insertWakeups(t *testing.T, s store.Store) {
	t.Helper()
	Update(t, s, func(tx store.Tx) error {
		for _, w := range []store.Wakeup{
			wakeup("ws-a", "w-d", "s-1", at(30), store.WakeupFired),
			wakeup("ws-a", "w-b", "s-1", at(20), store.WakeupPending),
			wakeup("ws-b", "w-x", "s-9", at(20), store.WakeupPending),
			wakeup("ws-a", "w-c", "s-1", at(10), store.WakeupPending),
			wakeup("ws-a", "w-a", "s-2", at(20), store.WakeupPending),
			wakeup("ws-a", "w-f", "s-2", at(5), store.WakeupCancelled),
			wakeup("ws-a", "w-e", "", at(0), store.WakeupPending),
			wakeup("ws-b", "w-y", "", at(40), store.WakeupPending),
		} {
			if err := tx.PutWakeup(w); err != nil {
				return fmt.Errorf("PutWakeup(%s): %w", w.ID, err)
			}
		}
		return nil
	})
}

func testWakeupsOrder(t *testing.T, s store.Store) {
	insertWakeups(t, s)
	View(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			name string
			list func() ([]store.Wakeup, error)
			want []baton.WakeupID
		}{
			{"ListWakeups(ws-a, \"\")", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-a", "") },
				[]baton.WakeupID{"w-e", "w-f", "w-c", "w-a", "w-b", "w-d"}},
			{"ListWakeups(ws-b, \"\")", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-b", "") },
				[]baton.WakeupID{"w-x", "w-y"}},
			{"ListWakeups(ws-none, \"\")", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-none", "") }, nil},
			{"ListWakeups(ws-a, s-1)", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-a", "s-1") },
				[]baton.WakeupID{"w-c", "w-b", "w-d"}},
			{"ListWakeups(ws-a, s-2)", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-a", "s-2") },
				[]baton.WakeupID{"w-f", "w-a"}},
			{"ListWakeups(ws-a, s-none)", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-a", "s-none") }, nil},
			{"ListWakeups(ws-b, s-9)", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-b", "s-9") },
				[]baton.WakeupID{"w-x"}},
			{"ListWakeups(ws-a, s-9) (of another workspace)", func() ([]store.Wakeup, error) { return tx.ListWakeups("ws-a", "s-9") }, nil},
		} {
			got, err := c.list()
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			diff(t, c.name+" ids", c.want, wakeupIDs(got))
		}
		got, err := tx.ListWakeups("ws-a", "s-2")
		if err != nil {
			return err
		}
		diff(t, "ListWakeups(ws-a, s-2) records", []store.Wakeup{
			wakeup("ws-a", "w-f", "s-2", at(5), store.WakeupCancelled),
			wakeup("ws-a", "w-a", "s-2", at(20), store.WakeupPending),
		}, got)
		return nil
	})
}

func testDueWakeups(t *testing.T, s store.Store) {
	insertWakeups(t, s)
	View(t, s, func(tx store.Tx) error {
		for _, c := range []struct {
			now   int // seconds after epoch
			limit int
			want  []baton.WakeupID
		}{
			{-1, 0, nil},
			{0, 0, []baton.WakeupID{"w-e"}}, // At == now is due
			{19, 0, []baton.WakeupID{"w-e", "w-c"}},
			{20, 0, []baton.WakeupID{"w-e", "w-c", "w-a", "w-b", "w-x"}},
			{20, 2, []baton.WakeupID{"w-e", "w-c"}},
			{20, -1, []baton.WakeupID{"w-e", "w-c", "w-a", "w-b", "w-x"}},
			{1000, 0, []baton.WakeupID{"w-e", "w-c", "w-a", "w-b", "w-x", "w-y"}},
			{1000, 6, []baton.WakeupID{"w-e", "w-c", "w-a", "w-b", "w-x", "w-y"}},
			{1000, 100, []baton.WakeupID{"w-e", "w-c", "w-a", "w-b", "w-x", "w-y"}},
			{1000, 1, []baton.WakeupID{"w-e"}},
		} {
			got, err := tx.DueWakeups(at(c.now), c.limit)
			if err != nil {
				return err
			}
			diff(t, fmt.Sprintf("DueWakeups(epoch%+ds, %d) ids", c.now, c.limit), c.want, wakeupIDs(got))
		}
		// now in another location is the same instant.
		got, err := tx.DueWakeups(at(19).In(fixedZone), 0)
		if err != nil {
			return err
		}
		diff(t, "DueWakeups(now in another zone) ids", []baton.WakeupID{"w-e", "w-c"}, wakeupIDs(got))
		return nil
	})
}

func testWakeupIndexesFollowPut(t *testing.T, s store.Store) {
	insertWakeups(t, s)
	Update(t, s, func(tx store.Tx) error {
		fired := wakeup("ws-a", "w-e", "", at(0), store.WakeupFired)
		moved := wakeup("ws-a", "w-b", "s-2", at(1), store.WakeupPending)   // new session, earlier
		revived := wakeup("ws-a", "w-d", "s-1", at(2), store.WakeupPending) // fired -> pending
		for _, w := range []store.Wakeup{fired, moved, revived} {
			if err := tx.PutWakeup(w); err != nil {
				return fmt.Errorf("PutWakeup(%s): %w", w.ID, err)
			}
		}
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		due, err := tx.DueWakeups(at(20), 0)
		if err != nil {
			return err
		}
		diff(t, "DueWakeups ids", []baton.WakeupID{"w-b", "w-d", "w-c", "w-a", "w-x"}, wakeupIDs(due))
		s1, err := tx.ListWakeups("ws-a", "s-1")
		if err != nil {
			return err
		}
		diff(t, "ListWakeups(ws-a, s-1) ids", []baton.WakeupID{"w-d", "w-c"}, wakeupIDs(s1))
		s2, err := tx.ListWakeups("ws-a", "s-2")
		if err != nil {
			return err
		}
		diff(t, "ListWakeups(ws-a, s-2) ids", []baton.WakeupID{"w-b", "w-f", "w-a"}, wakeupIDs(s2))
		all, err := tx.ListWakeups("ws-a", "")
		if err != nil {
			return err
		}
		diff(t, "ListWakeups(ws-a, \"\") ids", []baton.WakeupID{"w-e", "w-b", "w-d", "w-f", "w-c", "w-a"}, wakeupIDs(all))
		return nil
	})
}

func continuationIDs(l []store.Continuation) []baton.ContinuationID {
	ids := make([]baton.ContinuationID, len(l))
	for i, c := range l {
		ids[i] = c.ID
	}
	return ids
}

func testContinuations(t *testing.T, s store.Store) {
	for i, c := range []store.Continuation{
		continuation("ws-a", "c-c", store.ContinuationQueued),
		continuation("ws-b", "c-x", store.ContinuationQueued),
		continuation("ws-a", "c-a", store.ContinuationRefused),
		continuation("ws-a", "c-d", store.ContinuationQueued),
		continuation("ws-a", "c-b", store.ContinuationQueued),
	} {
		c.CreatedAt, c.UpdatedAt = at(10+i), at(10+i)
		Update(t, s, func(tx store.Tx) error { return tx.PutContinuation(c) })
	}
	check := func(wantQueued, wantA []baton.ContinuationID) {
		t.Helper()
		View(t, s, func(tx store.Tx) error {
			q, err := tx.QueuedContinuations()
			if err != nil {
				return err
			}
			diff(t, "QueuedContinuations ids", wantQueued, continuationIDs(q))
			a, err := tx.ListContinuations("ws-a")
			if err != nil {
				return err
			}
			diff(t, "ListContinuations(ws-a) ids", wantA, continuationIDs(a))
			none, err := tx.ListContinuations("ws-none")
			if err != nil || len(none) != 0 {
				t.Errorf("ListContinuations(ws-none) = %v, %v; want none and no error", none, err)
			}
			return nil
		})
	}
	all := []baton.ContinuationID{"c-c", "c-a", "c-d", "c-b"}
	check([]baton.ContinuationID{"c-c", "c-x", "c-d", "c-b"}, all)

	// Leaving queued leaves the queue; coming back takes the old place.
	update := func(id baton.ContinuationID, st store.ContinuationState) {
		t.Helper()
		Update(t, s, func(tx store.Tx) error {
			c, err := tx.GetContinuation(id)
			if err != nil {
				return err
			}
			c.State, c.Reason = st, "now "+string(st)
			return tx.PutContinuation(c)
		})
	}
	update("c-c", store.ContinuationStarted)
	update("c-d", store.ContinuationCancelled)
	check([]baton.ContinuationID{"c-x", "c-b"}, all)
	update("c-c", store.ContinuationQueued)
	check([]baton.ContinuationID{"c-c", "c-x", "c-b"}, all)
}

func testListWorkspaces(t *testing.T, s store.Store) {
	View(t, s, func(tx store.Tx) error {
		l, err := tx.ListWorkspaces()
		if err != nil || len(l) != 0 {
			t.Errorf("ListWorkspaces of an empty store = %v, %v; want none and no error", l, err)
		}
		return nil
	})
	var want []store.Workspace
	for _, id := range []baton.WorkspaceID{"ws-c", "ws-a", "ws-b"} {
		w := workspace(id)
		want = append(want, w)
		Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(w) })
	}
	want[0].Archived, want[0].CurrentSession, want[0].UpdatedAt = true, "s-1", at(9)
	Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(want[0]) })
	slices.SortFunc(want, func(a, b store.Workspace) int { return cmp.Compare(a.ID, b.ID) })
	View(t, s, func(tx store.Tx) error {
		got, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		slices.SortFunc(got, func(a, b store.Workspace) int { return cmp.Compare(a.ID, b.ID) })
		diff(t, "ListWorkspaces (sorted by id)", want, got)
		return nil
	})
}

func launchIDs(l []store.Launch) []baton.LaunchID {
	ids := make([]baton.LaunchID, len(l))
	for i, x := range l {
		ids[i] = x.ID
	}
	return ids
}

// testLiveLaunches checks that LiveLaunches lists exactly the live
// launches, oldest first, per workspace and for all, and follows Puts.
func testLiveLaunches(t *testing.T, s store.Store) {
	check := func(tx store.Tx, when string, want map[baton.WorkspaceID][]baton.LaunchID) {
		t.Helper()
		for ws, ids := range want {
			got, err := tx.LiveLaunches(ws)
			if err != nil {
				t.Errorf("LiveLaunches(%q) %s: %v", ws, when, err)
				continue
			}
			diff(t, fmt.Sprintf("LiveLaunches(%q) %s", ws, when), ids, launchIDs(got))
		}
	}
	Update(t, s, func(tx store.Tx) error {
		for _, l := range []store.Launch{
			launch("ws-a", "l-3", live, 1),
			launch("ws-a", "l-1", gone, 2),
			launch("ws-b", "l-2", live, 3),
			launch("ws-a", "l-0", live, 4),
		} {
			if err := tx.PutLaunch(l); err != nil {
				return err
			}
		}
		check(tx, "in the inserting Update", map[baton.WorkspaceID][]baton.LaunchID{
			"ws-a": {"l-3", "l-0"}, "ws-b": {"l-2"}, "": {"l-3", "l-2", "l-0"}, "ws-none": nil,
		})
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		check(tx, "after inserts", map[baton.WorkspaceID][]baton.LaunchID{
			"ws-a": {"l-3", "l-0"}, "ws-b": {"l-2"}, "": {"l-3", "l-2", "l-0"},
		})
		got, err := tx.LiveLaunches("ws-b")
		if err != nil {
			return err
		}
		diff(t, "LiveLaunches(ws-b) records", []store.Launch{launch("ws-b", "l-2", live, 3)}, got)
		return nil
	})
	// l-3 is confirmed gone, l-1 comes back live (in its place: oldest
	// first), l-0 is rewritten live.
	Update(t, s, func(tx store.Tx) error {
		l3 := launch("ws-a", "l-3", gone, 1)
		l3.EndReason = "reaped"
		l0 := launch("ws-a", "l-0", live, 4)
		l0.Holder = "holder-2"
		if err := errors.Join(tx.PutLaunch(l3), tx.PutLaunch(launch("ws-a", "l-1", live, 2)), tx.PutLaunch(l0)); err != nil {
			return err
		}
		check(tx, "in the Update that put them", map[baton.WorkspaceID][]baton.LaunchID{
			"ws-a": {"l-1", "l-0"}, "": {"l-1", "l-2", "l-0"},
		})
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		check(tx, "after Puts", map[baton.WorkspaceID][]baton.LaunchID{
			"ws-a": {"l-1", "l-0"}, "ws-b": {"l-2"}, "": {"l-1", "l-2", "l-0"},
		})
		got, err := tx.GetLaunch("l-3")
		if err != nil {
			return err
		}
		if !got.Gone || got.EndReason != "reaped" {
			t.Errorf("GetLaunch(l-3) = %+v, want gone, reaped", got)
		}
		return nil
	})
	Update(t, s, func(tx store.Tx) error {
		for _, l := range []store.Launch{launch("ws-a", "l-1", gone, 2), launch("ws-a", "l-0", gone, 4), launch("ws-b", "l-2", gone, 3)} {
			if err := tx.PutLaunch(l); err != nil {
				return err
			}
		}
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		check(tx, "once all are gone", map[baton.WorkspaceID][]baton.LaunchID{"ws-a": nil, "ws-b": nil, "": nil})
		return nil
	})
}

// insertInstructions inserts pending instructions ids into ws-a, one
// Update each (with ws-b's i-x in the second), and returns them in insert
// order.
func insertInstructions(t *testing.T, s store.Store, ids ...baton.InstructionID) []store.Instruction {
	t.Helper()
	var out []store.Instruction
	for n, id := range ids {
		Update(t, s, func(tx store.Tx) error {
			if n == 1 {
				if err := tx.PutInstruction(instruction("ws-b", "i-x", store.InstructionPending)); err != nil {
					return err
				}
			}
			i := instruction("ws-a", id, store.InstructionPending)
			i.CreatedAt = at(10 + n)
			out = append(out, i)
			return tx.PutInstruction(i)
		})
	}
	return out
}

// testInstructions checks ListInstructions: per workspace, insert order,
// any state, Puts keeping the place.
func testInstructions(t *testing.T, s store.Store) {
	want := insertInstructions(t, s, "i-c", "i-a", "i-d", "i-b")
	Update(t, s, func(tx store.Tx) error {
		i, err := tx.GetInstruction("i-c")
		if err != nil {
			return err
		}
		i.State, i.Session, i.UpdatedAt = store.InstructionDelivered, "s-1", at(30)
		want[0] = i
		if err := tx.PutInstruction(i); err != nil {
			return err
		}
		got, err := tx.ListInstructions("ws-a")
		if err != nil {
			return err
		}
		diff(t, "ListInstructions(ws-a) in the Update that put i-c", want, got)
		return nil
	})
	View(t, s, func(tx store.Tx) error {
		got, err := tx.ListInstructions("ws-a")
		if err != nil {
			return err
		}
		diff(t, "ListInstructions(ws-a)", want, got)
		got, err = tx.ListInstructions("ws-b")
		if err != nil {
			return err
		}
		diff(t, "ListInstructions(ws-b)", []store.Instruction{instruction("ws-b", "i-x", store.InstructionPending)}, got)
		got, err = tx.ListInstructions("ws-none")
		if err != nil || len(got) != 0 {
			t.Errorf("ListInstructions(ws-none) = %v, %v; want none", got, err)
		}
		return nil
	})
}

// testOpenInstructions checks OpenInstructions: per workspace, the pending
// and unknown instructions only, in insert order, following every Put (out
// when delivered or cancelled, back in its place when sent again), inside
// the Update that puts as after its commit.
func testOpenInstructions(t *testing.T, s store.Store) {
	ids := []baton.InstructionID{"i-c", "i-a", "i-d", "i-b", "i-e"}
	all := map[baton.InstructionID]store.Instruction{}
	for _, i := range insertInstructions(t, s, ids...) {
		all[i.ID] = i
	}
	// want lists the open ones of ws-a in insert order.
	want := func() []store.Instruction {
		var out []store.Instruction
		for _, id := range ids {
			if all[id].State.Open() {
				out = append(out, all[id])
			}
		}
		return out
	}
	check := func(tx store.Tx, when string) {
		t.Helper()
		got, err := tx.OpenInstructions("ws-a")
		if err != nil {
			t.Errorf("OpenInstructions(ws-a) %s: %v", when, err)
			return
		}
		diff(t, "OpenInstructions(ws-a) "+when, want(), got)
	}
	set := func(id baton.InstructionID, st store.InstructionState, at time.Time) func(tx store.Tx) error {
		return func(tx store.Tx) error {
			i, err := tx.GetInstruction(id)
			if err != nil {
				return err
			}
			i.State, i.UpdatedAt = st, at
			if st != store.InstructionPending {
				i.Session = "s-1"
			}
			all[id] = i
			return tx.PutInstruction(i)
		}
	}
	View(t, s, func(tx store.Tx) error { check(tx, "all pending"); return nil })
	steps := []struct {
		id baton.InstructionID
		st store.InstructionState
	}{
		{"i-c", store.InstructionUnknown},   // still open
		{"i-a", store.InstructionDelivered}, // out
		{"i-d", store.InstructionCancelled}, // out
		{"i-c", store.InstructionDelivered}, // out
		{"i-a", store.InstructionPending},   // sent again: back in its place
		{"i-b", store.InstructionUnknown},   // still open
	}
	for n, step := range steps {
		when := fmt.Sprintf("after %s became %s", step.id, step.st)
		Update(t, s, func(tx store.Tx) error {
			if err := set(step.id, step.st, at(30+n))(tx); err != nil {
				return err
			}
			check(tx, "in the Update "+when)
			return nil
		})
		View(t, s, func(tx store.Tx) error { check(tx, when); return nil })
	}
	View(t, s, func(tx store.Tx) error {
		got, err := tx.OpenInstructions("ws-b")
		if err != nil {
			return err
		}
		diff(t, "OpenInstructions(ws-b)", []store.Instruction{instruction("ws-b", "i-x", store.InstructionPending)}, got)
		got, err = tx.OpenInstructions("ws-none")
		if err != nil || len(got) != 0 {
			t.Errorf("OpenInstructions(ws-none) = %v, %v; want none", got, err)
		}
		return nil
	})
	// A rolled back Put leaves the open set as it was.
	before := all["i-e"]
	wantErr := errors.New("roll back")
	err := s.Update(context.Background(), func(tx store.Tx) error {
		if err := set("i-e", store.InstructionDelivered, at(50))(tx); err != nil {
			return err
		}
		return wantErr
	})
	if !errors.Is(err, wantErr) {
		t.Fatalf("Update = %v, want %v", err, wantErr)
	}
	all["i-e"] = before
	View(t, s, func(tx store.Tx) error { check(tx, "after a rolled back Put"); return nil })
}
