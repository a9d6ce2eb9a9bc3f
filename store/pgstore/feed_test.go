package pgstore_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// retried is what a Store logs when an Update runs again after a
// conflict.
const retried = "pgstore: conflict, retrying"

// TestFeedSharedByTwoStores: two Stores on one schema (two processes)
// append to one workspace's change feed, in turn and at once. The feed
// must run 1, 2, 3... in commit order, with one change per record, and
// no Update runs twice: each numbers its changes under the workspace's
// lock.
func TestFeedSharedByTwoStores(t *testing.T) {
	schema := freshSchema(t)
	core, logs := observer.New(zapcore.DebugLevel)
	a := open(t, schema, pgstore.Options{Logger: zap.New(core)})
	b := open(t, schema, pgstore.Options{})
	now := time.Now()
	send := func(s store.Store, ws baton.WorkspaceID, id string) {
		t.Helper()
		update(t, s, func(tx store.Tx) error {
			return tx.PutInstruction(store.Instruction{ID: baton.InstructionID(id), Workspace: ws, Text: id,
				State: store.InstructionPending, CreatedAt: now, UpdatedAt: now})
		})
	}
	reruns := func() int { return logs.FilterMessage(retried).Len() }

	// In turn.
	const rounds = 5
	var want []string
	for r := range rounds {
		for _, s := range []struct {
			name  string
			store store.Store
		}{{"a", a}, {"a", a}, {"b", b}} {
			id := fmt.Sprintf("%s-%d-%d", s.name, r, len(want))
			send(s.store, "ws-turns", id)
			want = append(want, id)
		}
	}
	for i := range want {
		want[i] = "instruction:" + want[i]
	}
	checkFeed(t, a, "ws-turns", want)

	// A's Updates of a handoff between B's of instructions.
	h := store.Handoff{ID: "h-batch", Workspace: "ws-batch", RequestID: "r", State: store.StateGenerating, Attempt: 1,
		CreatedAt: now, UpdatedAt: now}
	update(t, a, func(tx store.Tx) error { return tx.PutHandoff(h) })
	want = []string{"handoff:h-batch"}
	for r := range rounds {
		update(t, a, func(tx store.Tx) error {
			got, err := tx.GetHandoff(h.ID)
			if err != nil {
				return err
			}
			got.Error = fmt.Sprint("round ", r)
			return tx.PutHandoff(got)
		})
		id := fmt.Sprint("b-", r)
		send(b, "ws-batch", id)
		want = append(want, "handoff:h-batch", "instruction:"+id)
	}
	checkFeed(t, b, "ws-batch", want)

	// At once: goroutines of both Stores.
	const writers, each = 4, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	var sent []string
	for w := range 2 * writers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Go(func() {
			for k := range each {
				id := fmt.Sprintf("w%d-%d", w, k)
				err := s.Update(t.Context(), func(tx store.Tx) error {
					return tx.PutInstruction(store.Instruction{ID: baton.InstructionID(id), Workspace: "ws-race", Text: id,
						State: store.InstructionPending, CreatedAt: now, UpdatedAt: now})
				})
				if err != nil {
					t.Errorf("Update: %v", err)
					return
				}
				mu.Lock()
				sent = append(sent, id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	got := checkFeed(t, b, "ws-race", nil)
	for i := range sent {
		sent[i] = "instruction:" + sent[i]
	}
	slices.Sort(got)
	slices.Sort(sent)
	if !slices.Equal(got, sent) {
		t.Errorf("the feed holds %v, want one change for each of %v", got, sent)
	}
	if n := reruns(); n != 0 {
		t.Errorf("A ran %d Updates again, want none", n)
	}
}

// checkFeed reads ws's feed through s and checks that its Seqs run 1, 2,
// 3... and that LastSeq is the last; with want, that its records are
// want ("kind:id"), in order. It returns them in feed order.
func checkFeed(t *testing.T, s store.Store, ws baton.WorkspaceID, want []string) []string {
	t.Helper()
	var ids []string
	err := s.View(t.Context(), func(tx store.Tx) error {
		cs, err := tx.Changes(ws, 0, 0)
		if err != nil {
			return err
		}
		for i, c := range cs {
			if c.Seq != int64(i+1) {
				t.Fatalf("change %d of %s has Seq %d, want %d", i, ws, c.Seq, i+1)
			}
			switch {
			case c.Instruction != nil:
				ids = append(ids, "instruction:"+string(c.Instruction.ID))
			case c.Handoff != nil:
				ids = append(ids, "handoff:"+string(c.Handoff.ID))
			default:
				ids = append(ids, "session")
			}
		}
		last, err := tx.LastSeq(ws)
		if err == nil && last != int64(len(cs)) {
			t.Errorf("LastSeq(%s) = %d, want %d", ws, last, len(cs))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want != nil && !slices.Equal(ids, want) {
		t.Errorf("feed of %s = %v, want %v", ws, ids, want)
	}
	return ids
}
