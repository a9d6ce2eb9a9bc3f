package pgstore_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// notifyWait bounds how long a test waits for a notification that must
// come. Never reached when things work; generous for a loaded machine.
const notifyWait = 20 * time.Second

func awaitNotification(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(notifyWait):
		t.Fatalf("%s: no notification within %v", what, notifyWait)
	}
}

func addInstruction(t *testing.T, s store.Store, ws baton.WorkspaceID, id string) {
	t.Helper()
	if err := s.Update(t.Context(), func(tx store.Tx) error {
		return tx.PutInstruction(store.Instruction{ID: baton.InstructionID(id), Workspace: ws, Text: "go",
			State: store.InstructionPending})
	}); err != nil {
		t.Fatal(err)
	}
}

// A commit through one store reaches the subscribers of another store on
// the same schema (as it would another process), through LISTEN/NOTIFY,
// and the change it announces is visible.
func TestNotifyAcrossStores(t *testing.T) {
	schema := freshSchema(t)
	a, b := open(t, schema, pgstore.Options{}), open(t, schema, pgstore.Options{})
	chA, cancelA := a.Subscribe("ws-a")
	defer cancelA()
	chAll, cancelAll := a.Subscribe("")
	defer cancelAll()
	for i := range 3 {
		addInstruction(t, b, "ws-a", fmt.Sprint("i-", i))
		awaitNotification(t, "subscriber of ws-a", chA)
		awaitNotification(t, "subscriber of every workspace", chAll)
		if err := a.View(t.Context(), func(tx store.Tx) error {
			last, err := tx.LastSeq("ws-a")
			if err == nil && last < int64(i+1) {
				t.Errorf("notified with LastSeq = %d, want >= %d", last, i+1)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// Another workspace wakes only the subscriber of every workspace.
	addInstruction(t, b, "ws-b", "i-b")
	awaitNotification(t, "subscriber of every workspace, for ws-b", chAll)
	select {
	case <-chA:
		t.Error("subscriber of ws-a notified of a commit to ws-b")
	default:
	}
}

// When the listener's connection is killed, the store reconnects and
// notifies every subscriber (changes may have been missed meanwhile), and
// notifications flow again afterwards.
func TestListenerReconnects(t *testing.T) {
	schema := freshSchema(t)
	a, b := open(t, schema, pgstore.Options{}), open(t, schema, pgstore.Options{})
	ch, cancel := a.Subscribe("ws-a")
	defer cancel()

	conn, err := pgx.Connect(t.Context(), serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var killed int
	// Two stores listen on this schema's channel; kill both listeners:
	// the one of a is what this test watches.
	err = conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = 'baton-pgstore-listener' AND query = $1`,
		"LISTEN "+pgx.Identifier{schema + "_changes"}.Sanitize()).Scan(&killed)
	if err != nil {
		t.Fatal(err)
	}
	if killed != 2 {
		t.Fatalf("terminated %d listeners, want 2", killed)
	}
	awaitNotification(t, "after the listener's connection was killed", ch)

	// Listening again: a commit elsewhere arrives. (A spurious
	// notification may come first; drain until the commit is seen.)
	addInstruction(t, b, "ws-a", "i-after")
	deadline := time.Now().Add(notifyWait)
	for {
		awaitNotification(t, "a commit after the reconnection", ch)
		var n int
		if err := a.View(t.Context(), func(tx store.Tx) error {
			l, err := tx.ListInstructions("ws-a")
			n = len(l)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the commit after the reconnection was never seen")
		}
	}
}

// After Close, Subscribe returns a channel that never receives, and a
// cancel that does nothing.
func TestSubscribeAfterClose(t *testing.T) {
	s := open(t, "", pgstore.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ch, cancel := s.Subscribe("")
	cancel()
	select {
	case <-ch:
		t.Error("a subscription made after Close was notified")
	default:
	}
}

// Close ends the listener and the publisher: no goroutine of the store
// outlives it.
func TestCloseStopsGoroutines(t *testing.T) {
	s := open(t, "", pgstore.Options{})
	ch, cancel := s.Subscribe("ws-a")
	defer cancel()
	addInstruction(t, s, "ws-a", "i-1")
	awaitNotification(t, "own commit", ch)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A goroutine that has signalled Close may still be returning: poll
	// (bounded) until it is gone.
	buf := make([]byte, 1<<20)
	var stacks string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); runtime.Gosched() {
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "pgstore.(*notifier)") {
			return
		}
	}
	t.Errorf("a notifier goroutine runs after Close:\n%s", stacks)
}
