package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// seedAll writes one record of each kind in workspace ws-a.
func seedAll(tx store.Tx) error {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	serr := tx.PutSession(store.Session{ID: "s-1", Workspace: "ws-a", Status: store.SessionIdle})
	return errors.Join(
		tx.PutWorkspace(store.Workspace{ID: "ws-a", Name: "a"}),
		serr,
		tx.PutHandoff(store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping}),
		tx.PutReservation(store.Reservation{Workspace: "ws-a", Held: true, Epoch: 1}),
		tx.PutWakeup(store.Wakeup{ID: "w-1", Workspace: "ws-a", At: now, Status: store.WakeupPending}),
		tx.PutContinuation(store.Continuation{ID: "c-1", Workspace: "ws-a", State: store.ContinuationQueued}),
		tx.PutLaunch(store.Launch{ID: "l-1", Workspace: "ws-a"}),
		tx.PutInstruction(store.Instruction{ID: "i-1", Workspace: "ws-a", State: store.InstructionPending}),
	)
}

// corrupt writes value under k with raw badger, in a directory the store
// wrote and closed.
func corrupt(t *testing.T, dir string, k, value []byte) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatalf("raw badger: %v", err)
	}
	defer db.Close()
	err = db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(k); err != nil {
			return fmt.Errorf("key %q is not a key the store wrote: %w", k, err)
		}
		return txn.Set(k, value)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCorruptValues writes garbage, a truncated value and an empty one
// under real keys, and checks that every read meeting it returns an
// ErrStorage naming the key, and never panics.
func TestCorruptValues(t *testing.T) {
	type read = func(store.Tx) error
	get := func(f func(store.Tx) (any, error)) read {
		return func(tx store.Tx) error { _, err := f(tx); return err }
	}
	reads := []struct {
		key   key
		reads map[string]read
	}{
		{recordKey(tWorkspace, "ws-a"), map[string]read{
			"GetWorkspace":   get(func(tx store.Tx) (any, error) { return tx.GetWorkspace("ws-a") }),
			"ListWorkspaces": get(func(tx store.Tx) (any, error) { return tx.ListWorkspaces() }),
		}},
		{recordKey(tSession, "s-1"), map[string]read{
			"GetSession":   get(func(tx store.Tx) (any, error) { return tx.GetSession("s-1") }),
			"ListSessions": get(func(tx store.Tx) (any, error) { return tx.ListSessions("ws-a") }),
		}},
		{recordKey(tHandoff, "h-1"), map[string]read{
			"GetHandoff":           get(func(tx store.Tx) (any, error) { return tx.GetHandoff("h-1") }),
			"HandoffByRequest":     get(func(tx store.Tx) (any, error) { return tx.HandoffByRequest("ws-a", "r-1") }),
			"PendingHandoffs(ws)":  get(func(tx store.Tx) (any, error) { return tx.PendingHandoffs("ws-a") }),
			"ListHandoffs":         get(func(tx store.Tx) (any, error) { return tx.ListHandoffs("ws-a") }),
			"PendingHandoffs(all)": get(func(tx store.Tx) (any, error) { return tx.PendingHandoffs("") }),
		}},
		{requestKey("ws-a", "r-1"), map[string]read{
			"HandoffByRequest": get(func(tx store.Tx) (any, error) { return tx.HandoffByRequest("ws-a", "r-1") }),
		}},
		{recordKey(tReservation, "ws-a"), map[string]read{
			"GetReservation": get(func(tx store.Tx) (any, error) { return tx.GetReservation("ws-a") }),
		}},
		{recordKey(tWakeup, "w-1"), map[string]read{
			"GetWakeup":  get(func(tx store.Tx) (any, error) { return tx.GetWakeup("w-1") }),
			"DueWakeups": get(func(tx store.Tx) (any, error) { return tx.DueWakeups(time.Now(), 0) }),
		}},
		{recordKey(tContinuation, "c-1"), map[string]read{
			"GetContinuation":     get(func(tx store.Tx) (any, error) { return tx.GetContinuation("c-1") }),
			"QueuedContinuations": get(func(tx store.Tx) (any, error) { return tx.QueuedContinuations() }),
		}},
		{recordKey(tLaunch, "l-1"), map[string]read{
			"GetLaunch":        get(func(tx store.Tx) (any, error) { return tx.GetLaunch("l-1") }),
			"LiveLaunches":     get(func(tx store.Tx) (any, error) { return tx.LiveLaunches("") }),
			"LiveLaunchesOfWS": get(func(tx store.Tx) (any, error) { return tx.LiveLaunches("ws-a") }),
		}},
		{liveLaunches.key("ws-a"), map[string]read{
			"LiveLaunches": get(func(tx store.Tx) (any, error) { return tx.LiveLaunches("ws-a") }),
		}},
		{recordKey(tInstruction, "i-1"), map[string]read{
			"GetInstruction":   get(func(tx store.Tx) (any, error) { return tx.GetInstruction("i-1") }),
			"ListInstructions": get(func(tx store.Tx) (any, error) { return tx.ListInstructions("ws-a") }),
			"OpenInstructions": get(func(tx store.Tx) (any, error) { return tx.OpenInstructions("ws-a") }),
		}},
		{openInstructions.key("ws-a"), map[string]read{
			"OpenInstructions": get(func(tx store.Tx) (any, error) { return tx.OpenInstructions("ws-a") }),
		}},
		{feedPrefix("ws-a").u64(1), map[string]read{
			"Changes": get(func(tx store.Tx) (any, error) { return tx.Changes("ws-a", 0, 0) }),
		}},
		{counterKey(tFeed, "ws-a"), map[string]read{
			"LastSeq": get(func(tx store.Tx) (any, error) { return tx.LastSeq("ws-a") }),
		}},
	}
	values := map[string]func(good []byte) []byte{
		"garbage":   func([]byte) []byte { return []byte("\xff\x00not a record{") },
		"truncated": func(good []byte) []byte { return good[:len(good)/2] },
		"empty":     func([]byte) []byte { return []byte{} },
	}
	// One seeded directory, copied for each case.
	seeded := t.TempDir()
	goods := map[string][]byte{}
	for _, r := range reads {
		goods[string(r.key)] = nil
	}
	seed(t, seeded, goods)
	for _, r := range reads {
		for vname, value := range values {
			t.Run(fmt.Sprintf("%q/%s", []byte(r.key), vname), func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				if err := os.CopyFS(dir, os.DirFS(seeded)); err != nil {
					t.Fatal(err)
				}
				corrupt(t, dir, r.key, value(goods[string(r.key)]))
				s, err := Open(dir, Options{Small: true, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				for rname, read := range r.reads {
					err := func() (err error) {
						defer func() {
							if p := recover(); p != nil {
								err = fmt.Errorf("panic: %v", p)
								t.Errorf("%s over a %s value panicked: %v", rname, vname, p)
							}
						}()
						return s.View(context.Background(), read)
					}()
					if !errors.Is(err, ErrStorage) || !errors.Is(err, baton.ErrInternal) {
						t.Errorf("%s over a %s value: err = %v, want ErrStorage", rname, vname, err)
						continue
					}
					if want := fmt.Sprintf("%q", []byte(r.key)); !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not name the key %s", rname, err, want)
					}
				}
			})
		}
	}
}

// seed seeds a store in dir, closes it, and fills goods (keyed by the
// keys it holds) with the values stored under them.
func seed(t *testing.T, dir string, goods map[string][]byte) {
	t.Helper()
	s, err := Open(dir, Options{Small: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(context.Background(), seedAll); err != nil {
		t.Fatal(err)
	}
	err = s.db.View(func(txn *badger.Txn) error {
		for k := range goods {
			item, err := txn.Get([]byte(k))
			if err != nil {
				return fmt.Errorf("read %q: %w", k, err)
			}
			if goods[k], err = item.ValueCopy(nil); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}
