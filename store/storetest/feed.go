package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var feedTests = []testCase{
	{"Numbering", testFeedNumbering},
	{"OneChangePerRecord", testOneChangePerRecord},
	{"OnlyFeedKinds", testOnlyFeedKinds},
	{"RollbackLeavesNoChange", testRollbackLeavesNoChange},
	{"OwnChangesNotListed", testOwnChangesNotListed},
	{"Paging", testChangesPaging},
	{"ChangesAreValues", testChangesAreValues},
	{"ConcurrentCommitOrder", testFeedCommitOrder},
	{"Notifier", testNotifier},
}

// change is the Change a store should list for a record (Seq left 0).
func change(rec any) store.Change {
	switch r := rec.(type) {
	case store.Handoff:
		return store.Change{Workspace: r.Workspace, Handoff: &r}
	case store.Session:
		return store.Change{Workspace: r.Workspace, Session: &r}
	case store.Instruction:
		return store.Change{Workspace: r.Workspace, Instruction: &r}
	}
	panic(fmt.Sprintf("change of a %T", rec))
}

func instruction(ws baton.WorkspaceID, id baton.InstructionID, state store.InstructionState) store.Instruction {
	return store.Instruction{
		ID: id, Workspace: ws, Text: "do " + string(id), State: state, CreatedAt: at(5), UpdatedAt: at(5),
	}
}

// live and gone are the values of launch's argument isGone.
const live, gone = false, true

func launch(ws baton.WorkspaceID, id baton.LaunchID, isGone bool, created int) store.Launch {
	return store.Launch{
		ID: id, Workspace: ws, Session: "s-" + baton.SessionID(id), Holder: "holder-1", Engine: "demo",
		Gone: isGone, CreatedAt: at(created), UpdatedAt: at(created),
	}
}

// feed reads the whole feed of ws and its LastSeq in one View.
func feed(t *testing.T, s store.Store, ws baton.WorkspaceID) (changes []store.Change, last int64) {
	t.Helper()
	View(t, s, func(tx store.Tx) (err error) {
		if changes, err = tx.Changes(ws, 0, 0); err != nil {
			return err
		}
		last, err = tx.LastSeq(ws)
		return err
	})
	return changes, last
}

// numbered returns want with Seqs first, first+1, ... (the suite's
// expectation where every change of the store is one the test made).
func numbered(first int64, want ...store.Change) []store.Change {
	for i := range want {
		want[i].Seq = first + int64(i)
	}
	return want
}

// checkSeqs reports a test error unless the Seqs of l start above after
// and strictly increase.
func checkSeqs(t *testing.T, what string, after int64, l []store.Change) {
	t.Helper()
	for _, c := range l {
		if c.Seq <= after {
			t.Errorf("%s: Seq %d follows Seq %d; want strictly increasing", what, c.Seq, after)
		}
		after = c.Seq
	}
}

func testFeedNumbering(t *testing.T, s store.Store) {
	View(t, s, func(tx store.Tx) error {
		l, err := tx.Changes("ws-a", 0, 0)
		if err != nil || len(l) != 0 {
			t.Errorf("Changes of an empty store = %v, %v; want none", l, err)
		}
		if n, err := tx.LastSeq("ws-a"); err != nil || n != 0 {
			t.Errorf("LastSeq of an empty store = %d, %v; want 0", n, err)
		}
		return nil
	})
	var wantA, wantB []store.Change
	// Interleaved commits in two workspaces: each feed numbers its own
	// changes from 1, in commit order.
	Update(t, s, func(tx store.Tx) error {
		sess, err := putSession(tx, session("ws-a", "s-1"))
		wantA = append(wantA, change(sess))
		return err
	})
	Update(t, s, func(tx store.Tx) error {
		i := instruction("ws-b", "i-1", store.InstructionPending)
		wantB = append(wantB, change(i))
		return tx.PutInstruction(i)
	})
	Update(t, s, func(tx store.Tx) error {
		h := handoff("ws-a", "h-1", "r-1", store.StateStopping)
		wantA = append(wantA, change(h))
		return tx.PutHandoff(h)
	})
	Update(t, s, func(tx store.Tx) error {
		sess, err := tx.GetSession("s-1")
		if err != nil {
			return err
		}
		sess.Status = store.SessionRunning
		wantA = append(wantA, change(sess))
		return tx.PutSession(sess)
	})
	for _, c := range []struct {
		ws   baton.WorkspaceID
		want []store.Change
	}{{"ws-a", wantA}, {"ws-b", wantB}, {"ws-none", nil}} {
		got, last := feed(t, s, c.ws)
		diff(t, "Changes("+string(c.ws)+")", numbered(1, c.want...), got)
		if last != int64(len(c.want)) {
			t.Errorf("LastSeq(%s) = %d, want %d", c.ws, last, len(c.want))
		}
	}
}

func testOneChangePerRecord(t *testing.T, s store.Store) {
	var want []store.Change
	Update(t, s, func(tx store.Tx) error {
		h := handoff("ws-a", "h-1", "r-1", store.StateStopping)
		if err := tx.PutHandoff(h); err != nil {
			return err
		}
		sess, err := putSession(tx, session("ws-a", "s-1"))
		if err != nil {
			return err
		}
		i := instruction("ws-a", "i-1", store.InstructionPending)
		if err := tx.PutInstruction(i); err != nil {
			return err
		}
		// Each record written again, twice: the feed keeps the last value.
		for n, state := range []store.HandoffState{store.StateGenerating, store.StateStarting} {
			h.State, h.Attempt = state, 2+n
			if err := tx.PutHandoff(h); err != nil {
				return err
			}
			sess.Status, sess.NativeID = store.SessionRunning, fmt.Sprint("native-", n)
			if err := tx.PutSession(sess); err != nil {
				return err
			}
			i.State, i.Session = store.InstructionDelivered, baton.SessionID(fmt.Sprint("s-", n))
			if err := tx.PutInstruction(i); err != nil {
				return err
			}
		}
		// A record of another workspace lands in that feed only.
		other := handoff("ws-b", "h-2", "r-2", store.StateCompleted)
		if err := tx.PutHandoff(other); err != nil {
			return err
		}
		want = []store.Change{change(h), change(sess), change(i), change(other)}
		return nil
	})
	got, last := feed(t, s, "ws-a")
	if len(got) != 3 {
		t.Fatalf("Changes(ws-a) after one Update writing 3 records 3 times each = %d changes, want 3:\n%v", len(got), got)
	}
	checkSeqs(t, "Changes(ws-a)", 0, got)
	if got[0].Seq != 1 || last != got[2].Seq {
		t.Errorf("Seqs %d..%d, LastSeq %d; want from 1, LastSeq the last", got[0].Seq, got[2].Seq, last)
	}
	// The order within one transaction is the backend's choice.
	byKind := map[string]store.Change{}
	for _, c := range got {
		c.Seq = 0
		byKind[kindOf(c)] = c
	}
	for _, w := range want[:3] {
		diff(t, "the "+kindOf(w)+" change (last value, Seq ignored)", w, byKind[kindOf(w)])
	}
	gotB, lastB := feed(t, s, "ws-b")
	diff(t, "Changes(ws-b)", numbered(1, want[3]), gotB)
	if lastB != 1 {
		t.Errorf("LastSeq(ws-b) = %d, want 1", lastB)
	}
}

// testOnlyFeedKinds checks that writes of the other kinds leave the feed
// alone.
func testOnlyFeedKinds(t *testing.T, s store.Store) {
	Update(t, s, func(tx store.Tx) error {
		w := workspace("ws-a")
		l := launch("ws-a", "l-1", live, 1)
		wk := wakeup("ws-a", "w-1", "", at(1), store.WakeupPending)
		c := continuation("ws-a", "c-1", store.ContinuationQueued)
		if err := errors.Join(tx.PutWorkspace(w), tx.PutLaunch(l), tx.PutWakeup(wk), tx.PutContinuation(c),
			tx.PutReservation(store.Reservation{Workspace: "ws-a", Held: true, Epoch: 1})); err != nil {
			return err
		}
		w.Name, l.Gone, wk.Status, c.State = "renamed", true, store.WakeupFired, store.ContinuationStarted
		return errors.Join(tx.PutWorkspace(w), tx.PutLaunch(l), tx.PutWakeup(wk), tx.PutContinuation(c))
	})
	if got, last := feed(t, s, "ws-a"); len(got) != 0 || last != 0 {
		t.Errorf("feed of ws-a after writes of workspaces, launches, wakeups, continuations and reservations = %v, LastSeq %d; want empty", got, last)
	}
}

func testRollbackLeavesNoChange(t *testing.T, s store.Store) {
	seed(t, s, "ws-a") // a handoff, a session and an instruction change
	before, lastBefore := feed(t, s, "ws-a")
	if len(before) != 3 {
		t.Fatalf("feed after seeding = %v; want 3 changes", before)
	}
	boom := errors.New("boom")
	err := s.Update(t.Context(), func(tx store.Tx) error {
		h := handoff("ws-a", "h-1", "r-1", store.StateCompleted)
		sess := session("ws-a", "s-1")
		sess.Status = store.SessionEnded
		i := instruction("ws-a", "i-1", store.InstructionCancelled)
		if err := errors.Join(tx.PutHandoff(h), tx.PutSession(sess), tx.PutInstruction(i),
			tx.PutInstruction(instruction("ws-a", "i-2", store.InstructionPending)),
			tx.PutHandoff(handoff("ws-b", "h-2", "r-2", store.StateStopping)),
			tx.PutSession(session("ws-b", "s-2"))); err != nil {
			return fmt.Errorf("a write failed, so the test proves nothing: %w", err)
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	after, lastAfter := feed(t, s, "ws-a")
	diff(t, "Changes(ws-a) after a failed Update", before, after)
	if lastAfter != lastBefore {
		t.Errorf("LastSeq(ws-a) after a failed Update = %d, want %d", lastAfter, lastBefore)
	}
	if got, last := feed(t, s, "ws-b"); len(got) != 0 || last != 0 {
		t.Errorf("feed of ws-b after a failed Update = %v, LastSeq %d; want empty", got, last)
	}
	// The next commit follows the last committed change.
	var i store.Instruction
	Update(t, s, func(tx store.Tx) error {
		i = instruction("ws-a", "i-2", store.InstructionPending)
		return tx.PutInstruction(i)
	})
	got, last := feed(t, s, "ws-a")
	if len(got) != len(before)+1 {
		t.Fatalf("feed after one more commit = %v; want %d changes", got, len(before)+1)
	}
	checkSeqs(t, "Changes(ws-a)", 0, got)
	next := got[len(got)-1]
	if last != next.Seq {
		t.Errorf("LastSeq = %d, want %d (the last change)", last, next.Seq)
	}
	next.Seq = 0
	diff(t, "change of the commit after the failed Update", change(i), next)
}

func testOwnChangesNotListed(t *testing.T, s store.Store) {
	seed(t, s, "ws-a")
	committed, lastCommitted := feed(t, s, "ws-a")
	Update(t, s, func(tx store.Tx) error {
		if err := tx.PutInstruction(instruction("ws-a", "i-2", store.InstructionPending)); err != nil {
			return err
		}
		if err := tx.PutHandoff(handoff("ws-a", "h-1", "r-1", store.StateGenerating)); err != nil {
			return err
		}
		got, err := tx.Changes("ws-a", 0, 0)
		if err != nil {
			return err
		}
		diff(t, "Changes inside an Update that wrote records", committed, got)
		last, err := tx.LastSeq("ws-a")
		if err != nil {
			return err
		}
		if last != lastCommitted {
			t.Errorf("LastSeq inside an Update that wrote records = %d, want %d (the committed one)", last, lastCommitted)
		}
		return nil
	})
	if got, last := feed(t, s, "ws-a"); len(got) != len(committed)+2 || last <= lastCommitted {
		t.Errorf("after the commit: %d changes, LastSeq %d; want %d changes and a LastSeq above %d", len(got), last, len(committed)+2, lastCommitted)
	}
}

func testChangesPaging(t *testing.T, s store.Store) {
	const n = 10
	for k := range n {
		Update(t, s, func(tx store.Tx) error {
			return tx.PutInstruction(instruction("ws-a", baton.InstructionID(fmt.Sprintf("i-%02d", k)), store.InstructionPending))
		})
	}
	all, last := feed(t, s, "ws-a")
	if len(all) != n {
		t.Fatalf("feed has %d changes, want %d", len(all), n)
	}
	checkSeqs(t, "Changes", 0, all)
	View(t, s, func(tx store.Tx) error {
		tests := []struct {
			after int64
			limit int
			want  []store.Change
		}{
			{0, 3, all[:3]},
			{all[2].Seq, 3, all[3:6]},
			{all[2].Seq, 0, all[3:]},
			{all[2].Seq, -1, all[3:]},
			{all[8].Seq, 5, all[9:]},
			{all[0].Seq - 1, 1, all[:1]},
			{-5, 2, all[:2]},
			{last, 0, nil},
			{last + 100, 1, nil},
			{0, n + 5, all},
		}
		for _, tc := range tests {
			got, err := tx.Changes("ws-a", tc.after, tc.limit)
			if err != nil {
				return err
			}
			diff(t, fmt.Sprintf("Changes(ws-a, after %d, limit %d)", tc.after, tc.limit), tc.want, got)
		}
		// Paging through with after = the last Seq seen yields the feed.
		var paged []store.Change
		for after, pages := int64(0), 0; ; pages++ {
			if pages > n {
				t.Fatalf("paging did not end after %d pages", pages)
			}
			page, err := tx.Changes("ws-a", after, 4)
			if err != nil {
				return err
			}
			if len(page) == 0 {
				break
			}
			if len(page) > 4 {
				t.Fatalf("page of %d changes with limit 4", len(page))
			}
			paged = append(paged, page...)
			after = page[len(page)-1].Seq
		}
		diff(t, "the feed read in pages of 4", all, paged)
		return nil
	})
}

// testFeedCommitOrder runs concurrent Updates that each read LastSeq and
// append one change. Serializability and "numbered after every change
// committed before it" together mean: each reads a distinct LastSeq, its
// own change is numbered above what it read, and every change numbered up
// to what it read exists.
func testFeedCommitOrder(t *testing.T, s store.Store) {
	const perWriter = 5
	var mu sync.Mutex
	read := map[baton.InstructionID]int64{} // what each committed Update read
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for k := range perWriter {
				id := baton.InstructionID(fmt.Sprintf("i-%d-%d", w, k))
				var seen int64
				err := update(t.Context(), s, func(tx store.Tx) error {
					var err error
					if seen, err = tx.LastSeq("ws-a"); err != nil {
						return err
					}
					return tx.PutInstruction(instruction("ws-a", id, store.InstructionPending))
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				read[id] = seen
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Update: %v", err)
	}
	got, last := feed(t, s, "ws-a")
	if len(got) != writers*perWriter {
		t.Fatalf("feed has %d changes, want %d", len(got), writers*perWriter)
	}
	checkSeqs(t, "Changes", 0, got)
	if last != got[len(got)-1].Seq {
		t.Errorf("LastSeq = %d, want %d", last, got[len(got)-1].Seq)
	}
	seenBy := map[int64]baton.InstructionID{}
	for n, c := range got {
		id := c.Instruction.ID
		r := read[id]
		if other, ok := seenBy[r]; ok {
			t.Errorf("the Updates of %s and %s both read LastSeq %d: not serializable", other, id, r)
		}
		seenBy[r] = id
		if c.Seq <= r {
			t.Errorf("change of %s has Seq %d, not above the LastSeq %d its Update read", id, c.Seq, r)
		}
		// Exactly the changes before it in the feed are at or below r.
		if n > 0 && got[n-1].Seq > r {
			t.Errorf("change Seq %d (%s) precedes %s, whose Update read LastSeq %d: numbered out of commit order", got[n-1].Seq, got[n-1].Instruction.ID, id, r)
		}
	}
}

// notifyTimeout bounds the wait for a notification the store owes (a bound
// on a broken store, not a wait for a state).
const notifyTimeout = 10 * time.Second

// testNotifier checks a store.Notifier: a subscriber of ws, or of every
// workspace, is notified after each commit that appends to ws, once the
// change is visible; not while the transaction runs, not after a rolled
// back one, and not for another workspace. The last two are stricter than
// the interface ("may be spurious"): a backend meets them by notifying
// only for what it committed.
func testNotifier(t *testing.T, s store.Store) {
	n, ok := s.(store.Notifier)
	if !ok {
		t.Skipf("%T does not implement store.Notifier", s)
	}
	chA, cancelA := n.Subscribe("ws-a")
	defer cancelA()
	chAll, cancelAll := n.Subscribe("")
	defer cancelAll()
	chB, cancelB := n.Subscribe("ws-b")
	defer cancelB()
	quiet := func(what string, chs ...<-chan struct{}) {
		t.Helper()
		for i, ch := range chs {
			select {
			case <-ch:
				t.Errorf("subscriber %d notified %s", i, what)
			default:
			}
		}
	}
	// awaitVisible waits for a notification on ch, then checks that the
	// commit it announces is visible.
	awaitVisible := func(name string, ch <-chan struct{}, wantLast int64) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(notifyTimeout):
			t.Fatalf("subscriber %s not notified within %v of a commit", name, notifyTimeout)
		}
		if _, last := feed(t, s, "ws-a"); last < wantLast {
			t.Errorf("subscriber %s notified while LastSeq(ws-a) = %d, below the announced commit's %d", name, last, wantLast)
		}
	}

	for round := range 3 {
		var want int64
		Update(t, s, func(tx store.Tx) error {
			if err := tx.PutInstruction(instruction("ws-a", baton.InstructionID(fmt.Sprint("i-", round)), store.InstructionPending)); err != nil {
				return err
			}
			quiet("before the commit", chA, chAll, chB)
			last, err := tx.LastSeq("ws-a")
			want = last + 1
			return err
		})
		awaitVisible("ws-a", chA, want)
		awaitVisible(`""`, chAll, want)
	}
	// Coalesced: two commits, one pending notification each at most, and
	// the committer never blocked on the unread channel.
	for k := range 2 {
		Update(t, s, func(tx store.Tx) error {
			return tx.PutInstruction(instruction("ws-a", "i-0", store.InstructionDelivered+store.InstructionState(fmt.Sprint(k))))
		})
	}
	awaitVisible("ws-a", chA, 5)
	awaitVisible(`""`, chAll, 5)

	err := s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.PutInstruction(instruction("ws-a", "i-rolled-back", store.InstructionPending)); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	if err == nil {
		t.Fatal("the failing Update committed")
	}
	Update(t, s, func(tx store.Tx) error { return tx.PutWorkspace(workspace("ws-a")) }) // commits no change
	quiet("after a rolled-back Update, a commit without changes, and commits to another workspace only", chA, chAll, chB)

	Update(t, s, func(tx store.Tx) error {
		return tx.PutInstruction(instruction("ws-b", "i-b", store.InstructionPending))
	})
	select {
	case <-chB:
	case <-time.After(notifyTimeout):
		t.Fatalf("subscriber ws-b not notified within %v of a commit", notifyTimeout)
	}
	select {
	case <-chAll:
	case <-time.After(notifyTimeout):
		t.Fatalf(`subscriber "" not notified within %v of a commit to ws-b`, notifyTimeout)
	}
	quiet("for a commit to another workspace", chA)
	cancelA()
	cancelA() // idempotent
}

// testChangesAreValues checks that a change read from the feed is the
// caller's copy: scribbling on it, History included, changes nothing.
func testChangesAreValues(t *testing.T, s store.Store) {
	h := fullHandoff()
	Update(t, s, func(tx store.Tx) error { return tx.PutHandoff(h) })
	want := numbered(1, change(fullHandoff())) // built anew: shares nothing with the store
	View(t, s, func(tx store.Tx) error {
		got, err := tx.Changes(h.Workspace, 0, 0)
		if err != nil {
			return err
		}
		diff(t, "the feed", want, got)
		if len(got) != 1 || got[0].Handoff == nil || len(got[0].Handoff.History) == 0 {
			t.Fatalf("feed = %v; want one handoff change with a History", got)
		}
		got[0].Seq = 99
		got[0].Handoff.Report = "scribbled"
		got[0].Handoff.History[0].Error = "scribbled"
		again, err := tx.Changes(h.Workspace, 0, 0)
		if err != nil {
			return err
		}
		diff(t, "the feed after scribbling on a change read from it", want, again)
		return nil
	})
}

// kindOf names the kind of record c carries ("" for none).
func kindOf(c store.Change) string {
	switch {
	case c.Handoff != nil:
		return "handoff"
	case c.Session != nil:
		return "session"
	case c.Instruction != nil:
		return "instruction"
	}
	return ""
}
