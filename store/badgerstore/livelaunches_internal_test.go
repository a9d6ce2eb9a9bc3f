package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// seedLaunches inserts the launches of two workspaces, ids out of
// alphabetical order and CreatedAt out of insert order, ends some of them
// in a later Update, and returns the live ones of each workspace in
// insert order (the order LiveLaunches(ws) returns).
func seedLaunches(t *testing.T, s *Store) map[baton.WorkspaceID][]store.Launch {
	t.Helper()
	const n = 9
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	var all []store.Launch
	err := s.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			for _, ws := range []baton.WorkspaceID{"ws-a", "ws-b"} {
				l := store.Launch{ID: baton.LaunchID(fmt.Sprintf("%s-l-%d", ws, (4*i)%n)), Workspace: ws, Session: "s-1",
					Engine: "demo", State: store.LaunchLive, CreatedAt: now.Add(time.Duration(n-i) * time.Second)}
				if err := tx.InsertLaunch(l); err != nil {
					return err
				}
				all = append(all, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[baton.WorkspaceID][]store.Launch{}
	err = s.Update(ctx, func(tx store.Tx) error {
		for k, l := range all {
			if k%3 != 1 {
				want[l.Workspace] = append(want[l.Workspace], l)
				continue
			}
			l.State, l.EndReason = store.LaunchGone, "exited"
			if err := tx.PutLaunch(l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for ws, w := range want {
		if len(w) == 0 || len(w) == n {
			t.Fatalf("workspace %s: %d live launches of %d; the test needs live and ended ones", ws, len(w), n)
		}
	}
	return want
}

// checkLive compares LiveLaunches of every workspace of want with it.
func checkLive(t *testing.T, s *Store, when string, want map[baton.WorkspaceID][]store.Launch) {
	t.Helper()
	checkReads(t, s, when, "LiveLaunches", store.Tx.LiveLaunches, want)
}

// legacyEntry is the key of l in the per-workspace lists of live launches
// that a baton older than the live launch sets wrote.
func legacyEntry(ws baton.WorkspaceID, seq uint64, id baton.LaunchID) key {
	return ownedList(tLiveByWS, string(ws)).prefix().u64(seq).str(string(id))
}

// makeOldLaunches turns dir, written and closed by this code, into the
// directory a baton that predates the live launch sets wrote: no 'a'
// table and no marker, and the live launches of each workspace in the
// list of keys of the 'v' table.
func makeOldLaunches(t *testing.T, dir string) {
	t.Helper()
	rawBadger(t, dir, func(db *badger.DB) error {
		if err := db.DropPrefix(newKey(tLiveSet)); err != nil {
			return err
		}
		return db.Update(func(txn *badger.Txn) error {
			var live []launchV1
			it := txn.NewIterator(badger.IteratorOptions{Prefix: newKey(tLaunch)})
			for it.Rewind(); it.Valid(); it.Next() {
				var v launchV1
				if err := it.Item().Value(func(b []byte) error { return decode(b, &v) }); err != nil {
					it.Close()
					return err
				}
				if v.State == store.LaunchLive {
					live = append(live, v)
				}
			}
			it.Close()
			for _, v := range live {
				if err := txn.Set(legacyEntry(v.Workspace, v.Seq, v.ID), []byte(v.ID)); err != nil {
					return err
				}
			}
			if err := txn.Set(formatKey, []byte(formatV1)); err != nil {
				return err
			}
			return txn.Delete(liveIndexKey)
		})
	})
	if n := countSetEntries(t, dir, liveLaunches); n != 0 {
		t.Fatalf("the old directory has %d live launch set entries", n)
	}
}

// TestLiveIndexBackfill reopens a directory a baton without the live
// launch sets wrote: Open lists the live launches of each workspace in
// insert order, deletes the old list entries, and a second Open writes
// nothing.
func TestLiveIndexBackfill(t *testing.T) {
	dir := t.TempDir()
	s := openOrFail(t, dir)
	want := seedLaunches(t, s)
	checkLive(t, s, "as written", want)
	closeOrFail(t, s)
	makeOldLaunches(t, dir)
	live := len(want["ws-a"]) + len(want["ws-b"])
	if n := countKeys(t, dir, newKey(tLiveByWS)); n != live {
		t.Fatalf("the old directory has %d list entries, want %d", n, live)
	}

	backfillTwice(t, dir, func(s *Store, when string) { checkLive(t, s, when, want) }, func() {
		if n := countSetEntries(t, dir, liveLaunches); n != live {
			t.Errorf("%d live launch set entries, want %d", n, live)
		}
		if n := countKeys(t, dir, newKey(tLiveByWS)); n != 0 {
			t.Errorf("%d old list entries left after the backfill, want 0", n)
		}
	})
}

// TestLiveIndexAfterOlderBaton reopens an indexed directory still at
// format 1 (an Open that crashed after the markers, before the format) in
// which a baton without the sets then ended a launch (its record only: it deleted
// a list entry this code never wrote) and inserted a live one (record,
// list entry and counter). Open repairs the set from the records written
// since its marker and deletes the list entry.
func TestLiveIndexAfterOlderBaton(t *testing.T) {
	dir := t.TempDir()
	s := openOrFail(t, dir)
	want := seedLaunches(t, s)
	var ended, last launchV1
	err := s.View(context.Background(), func(stx store.Tx) error {
		var err error
		if ended, _, err = getValue[launchV1](stx.(*tx), launchKey(want["ws-a"][0].ID)); err != nil {
			return err
		}
		ids, err := stx.(*tx).memberIDs(liveLaunches, "ws-a")
		if err == nil {
			last, _, err = getValue[launchV1](stx.(*tx), launchKey(baton.LaunchID(ids[len(ids)-1])))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	closeOrFail(t, s)

	added := launchV1{ID: "ws-a-new", Workspace: "ws-a", Engine: "demo", State: store.LaunchLive, Seq: last.Seq + 100}
	rawBadger(t, dir, func(db *badger.DB) error {
		return db.Update(func(txn *badger.Txn) error {
			ended.State = store.LaunchGone
			eb, err := encode(ended)
			if err != nil {
				return err
			}
			ab, err := encode(added)
			if err != nil {
				return err
			}
			return errors.Join(txn.Set(launchKey(ended.ID), eb), txn.Set(launchKey(added.ID), ab), txn.Set(formatKey, []byte(formatV1)),
				txn.Set(legacyEntry(added.Workspace, added.Seq, added.ID), []byte(added.ID)))
		})
	})
	want["ws-a"] = append(want["ws-a"][1:], added.record())

	s = openOrFail(t, dir)
	checkLive(t, s, fmt.Sprintf("after an older baton ended %s and added %s", ended.ID, added.ID), want)
	closeOrFail(t, s)
	if n := countKeys(t, dir, newKey(tLiveByWS)); n != 0 {
		t.Errorf("%d old list entries left, want 0", n)
	}
}

// TestLiveLaunchesAcrossWorkspaces puts a live launch into another
// workspace and ends one: the first leaves the live launches of its
// workspace and joins those of the other, the second leaves them; the
// global list follows.
func TestLiveLaunchesAcrossWorkspaces(t *testing.T) {
	s := openOrFail(t, t.TempDir())
	defer closeOrFail(t, s)
	moved := store.Launch{ID: "l-1", Workspace: "ws-a", State: store.LaunchLive}
	ended := store.Launch{ID: "l-2", Workspace: "ws-a", State: store.LaunchLive}
	for _, step := range []func(tx store.Tx) error{
		func(tx store.Tx) error { return errors.Join(tx.InsertLaunch(moved), tx.InsertLaunch(ended)) },
		func(tx store.Tx) error {
			moved.Workspace, ended.State = "ws-b", store.LaunchGone
			return errors.Join(tx.PutLaunch(moved), tx.PutLaunch(ended))
		},
	} {
		if err := s.Update(context.Background(), step); err != nil {
			t.Fatal(err)
		}
	}
	checkLive(t, s, "after the moves", map[baton.WorkspaceID][]store.Launch{"ws-a": nil, "ws-b": {moved}, "": {moved}})
}

// TestCorruptSetBreaksTheWrite writes a record into a workspace whose set
// does not decode, ignoring the error: the Update must not commit the
// record without its place in the set.
func TestCorruptSetBreaksTheWrite(t *testing.T) {
	tests := []struct {
		name   string
		set    *wsSet
		insert func(tx store.Tx, id string) error
		get    func(tx store.Tx, id string) error
	}{
		{"open instructions", openInstructions,
			func(tx store.Tx, id string) error {
				return tx.InsertInstruction(store.Instruction{ID: baton.InstructionID(id), Workspace: "ws-a", State: store.InstructionPending})
			},
			func(tx store.Tx, id string) error { _, err := tx.GetInstruction(baton.InstructionID(id)); return err }},
		{"live launches", liveLaunches,
			func(tx store.Tx, id string) error {
				return tx.InsertLaunch(store.Launch{ID: baton.LaunchID(id), Workspace: "ws-a", State: store.LaunchLive})
			},
			func(tx store.Tx, id string) error { _, err := tx.GetLaunch(baton.LaunchID(id)); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openOrFail(t, dir)
			ctx := context.Background()
			if err := s.Update(ctx, func(tx store.Tx) error { return tc.insert(tx, "r-1") }); err != nil {
				t.Fatal(err)
			}
			closeOrFail(t, s)
			corrupt(t, dir, tc.set.key("ws-a"), []byte("\x00\x01"))
			s = openOrFail(t, dir)
			defer closeOrFail(t, s)
			var insertErr error
			err := s.Update(ctx, func(tx store.Tx) error {
				insertErr = tc.insert(tx, "r-2")
				return nil // ignoring it
			})
			if !errors.Is(insertErr, ErrStorage) || !errors.Is(err, ErrStorage) {
				t.Fatalf("insert = %v, Update = %v; want ErrStorage for both", insertErr, err)
			}
			err = s.View(ctx, func(tx store.Tx) error {
				if err := tc.get(tx, "r-2"); !errors.Is(err, store.ErrNotFound) {
					t.Errorf("get(r-2) = %v, want ErrNotFound: the broken Update committed", err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
