package badgerstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var openIndexOptions = Options{Profile: ProfileSmall, Durability: DurabilityNoSync}

// openOrFail opens the store in dir; the caller closes it.
func openOrFail(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, openIndexOptions)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return s
}

func closeOrFail(t *testing.T, s *Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// rawBadger opens dir with badger alone (the store closed) for fn.
func rawBadger(t *testing.T, dir string, fn func(db *badger.DB) error) {
	t.Helper()
	db, err := badger.Open(badger.DefaultOptions(dir).WithLogger(nil))
	if err != nil {
		t.Fatalf("raw badger: %v", err)
	}
	err = fn(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// makeOld turns dir, written and closed by this code, into the directory
// a baton that predates the open instructions wrote: the same keys without
// the 'o' table, its guards and its marker.
func makeOld(t *testing.T, dir string) {
	t.Helper()
	rawBadger(t, dir, func(db *badger.DB) error {
		if err := db.DropPrefix(newKey(tOpenInstr)); err != nil {
			return err
		}
		return db.Update(func(txn *badger.Txn) error {
			if err := txn.Set(formatKey, []byte(formatV1)); err != nil {
				return err
			}
			return txn.Delete(openIndexKey)
		})
	})
	if n := countOpenEntries(t, dir); n != 0 {
		t.Fatalf("the old directory has %d open instruction entries", n)
	}
}

// countOpenEntries counts the entries of the sets of the 'o' table in dir
// (store closed).
func countOpenEntries(t *testing.T, dir string) int {
	t.Helper()
	return countSetEntries(t, dir, openInstructions)
}

// countSetEntries counts the entries of the sets of s in dir (store
// closed).
func countSetEntries(t *testing.T, dir string, s *wsSet) int {
	t.Helper()
	n := 0
	visitKeys(t, dir, newKey(s.table), func(item *badger.Item) error {
		return item.Value(func(b []byte) error {
			set, err := decodeSet(b)
			n += len(set)
			return err
		})
	})
	return n
}

// countKeys counts the keys under prefix in dir (store closed).
func countKeys(t *testing.T, dir string, prefix key) int {
	t.Helper()
	n := 0
	visitKeys(t, dir, prefix, func(*badger.Item) error { n++; return nil })
	return n
}

// visitKeys calls visit with each key under prefix in dir (store closed).
func visitKeys(t *testing.T, dir string, prefix key, visit func(*badger.Item) error) {
	t.Helper()
	rawBadger(t, dir, func(db *badger.DB) error {
		return db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				if err := visit(it.Item()); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// maxVersion returns badger's last commit version in dir (store closed):
// it moves with every commit, of a single key too.
func maxVersion(t *testing.T, dir string) uint64 {
	t.Helper()
	var v uint64
	rawBadger(t, dir, func(db *badger.DB) error { v = db.MaxVersion(); return nil })
	return v
}

// wantOpen returns the open instructions of ws in s as ListInstructions
// orders them, and checks that there are some and that others are not.
func wantOpen(t *testing.T, s *Store, ws baton.WorkspaceID) []store.Instruction {
	t.Helper()
	var out []store.Instruction
	closed := 0
	err := s.View(context.Background(), func(tx store.Tx) error {
		all, err := tx.ListInstructions(ws)
		for _, i := range all {
			if i.State.Open() {
				out = append(out, i)
			} else {
				closed++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 || closed == 0 {
		t.Fatalf("workspace %s: %d open and %d closed instructions; the test needs both", ws, len(out), closed)
	}
	return out
}

// checkOpen compares OpenInstructions of every workspace of want with it.
func checkOpen(t *testing.T, s *Store, when string, want map[baton.WorkspaceID][]store.Instruction) {
	t.Helper()
	checkReads(t, s, when, "OpenInstructions", store.Tx.OpenInstructions, want)
}

// checkReads compares read (named name) of every workspace of want with
// it.
func checkReads[R any](t *testing.T, s *Store, when, name string, read func(store.Tx, baton.WorkspaceID) ([]R, error),
	want map[baton.WorkspaceID][]R) {
	t.Helper()
	err := s.View(context.Background(), func(tx store.Tx) error {
		for ws, w := range want {
			got, err := read(tx, ws)
			if err != nil {
				return err
			}
			if d := cmp.Diff(w, got); d != "" {
				t.Errorf("%s: %s(%s) (-want +got):\n%s", when, name, ws, d)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// seedInstructions inserts the instructions of two workspaces, ids out of
// alphabetical order, in every state.
func seedInstructions(t *testing.T, s *Store) {
	t.Helper()
	states := []store.InstructionState{store.InstructionDelivered, store.InstructionPending, store.InstructionCancelled,
		store.InstructionUnknown, store.InstructionDelivered, store.InstructionPending, store.InstructionPending}
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	err := s.Update(context.Background(), func(tx store.Tx) error {
		for n, st := range states {
			for _, ws := range []baton.WorkspaceID{"ws-a", "ws-b"} {
				i := store.Instruction{ID: baton.InstructionID(fmt.Sprintf("%s-i-%d", ws, (3*n)%len(states))), Workspace: ws,
					Text: fmt.Sprintf("instruction %d", n), State: st, CreatedAt: now.Add(time.Duration(n) * time.Second)}
				if st != store.InstructionPending {
					i.Session = "s-1"
				}
				if ws == "ws-b" && st == store.InstructionPending {
					i.State = store.InstructionUnknown
				}
				if err := tx.InsertInstruction(i); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenIndexBackfill reopens a directory a baton without the open
// instructions index wrote: Open indexes its pending and unknown
// instructions, in insert order, and a second Open writes nothing.
func TestOpenIndexBackfill(t *testing.T) {
	dir := t.TempDir()
	s := openOrFail(t, dir)
	seedInstructions(t, s)
	want := map[baton.WorkspaceID][]store.Instruction{"ws-a": wantOpen(t, s, "ws-a"), "ws-b": wantOpen(t, s, "ws-b")}
	checkOpen(t, s, "as written", want)
	closeOrFail(t, s)
	makeOld(t, dir)

	backfillTwice(t, dir, func(s *Store, when string) { checkOpen(t, s, when, want) }, func() {
		if entries := countOpenEntries(t, dir); entries != len(want["ws-a"])+len(want["ws-b"]) {
			t.Errorf("%d open instruction entries, want %d", entries, len(want["ws-a"])+len(want["ws-b"]))
		}
	})
}

// backfillTwice opens and closes the store in dir twice, calling check
// after each Open and after the first Close: the first Open moves the
// directory to format 2, and the second Open and Close must commit
// nothing.
func backfillTwice(t *testing.T, dir string, check func(s *Store, when string), afterFirst func()) {
	t.Helper()
	s := openOrFail(t, dir)
	check(s, "after the backfill")
	closeOrFail(t, s)
	afterFirst()
	rawBadger(t, dir, func(db *badger.DB) error {
		return db.View(func(txn *badger.Txn) error {
			item, err := txn.Get(formatKey)
			if err != nil {
				return err
			}
			return item.Value(func(v []byte) error {
				if string(v) != formatVersion {
					t.Errorf("format %q after the backfill, want %q", v, formatVersion)
				}
				return nil
			})
		})
	})
	version := maxVersion(t, dir)

	s = openOrFail(t, dir)
	check(s, "after a second Open")
	closeOrFail(t, s)
	if v := maxVersion(t, dir); v != version {
		t.Errorf("a second Open and Close committed: badger's version went from %d to %d", version, v)
	}
}

// TestOpenIndexRedo checks that the backfill is idempotent: a directory
// left by a backfill that crashed half way (some entries written, and one
// stale, no marker) comes out right, and running it again writes nothing.
func TestOpenIndexRedo(t *testing.T) {
	dir := t.TempDir()
	s := openOrFail(t, dir)
	seedInstructions(t, s)
	want := map[baton.WorkspaceID][]store.Instruction{"ws-a": wantOpen(t, s, "ws-a"), "ws-b": wantOpen(t, s, "ws-b")}
	var closed instructionV1
	err := s.View(context.Background(), func(stx store.Tx) error {
		all, err := stx.ListInstructions("ws-a")
		for _, i := range all {
			if !i.State.Open() {
				closed, _, err = getValue[instructionV1](stx.(*tx), instructionKey(i.ID))
				break
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	closeOrFail(t, s)
	makeOld(t, dir)
	rawBadger(t, dir, func(db *badger.DB) error {
		return db.Update(func(txn *badger.Txn) error {
			first := want["ws-a"][0]
			v := toInstruction(first, 0)
			item, err := txn.Get(instructionKey(first.ID))
			if err != nil {
				return err
			}
			if err := item.Value(func(b []byte) error { return decode(b, &v) }); err != nil {
				return err
			}
			set := addEntry(addEntry(nil, v.Seq, string(v.ID)), closed.Seq, string(closed.ID))
			return txn.Set(openKey("ws-a"), appendSet(nil, set))
		})
	})

	rawBadger(t, dir, func(db *badger.DB) error {
		if err := syncSet(db, zap.NewNop(), openInstructions, true); err != nil {
			return err
		}
		before := db.MaxVersion()
		if err := syncSet(db, zap.NewNop(), openInstructions, true); err != nil {
			return err
		}
		if after := db.MaxVersion(); after != before {
			t.Errorf("the second syncSet committed: version %d, then %d", before, after)
		}
		return nil
	})
	s = openOrFail(t, dir)
	defer closeOrFail(t, s)
	checkOpen(t, s, "after a redone backfill", want)
}

// TestOpenIndexAfterOlderBaton reopens an indexed directory still at
// format 1 (an Open that crashed after the markers, before the format) in
// which a baton without the index then wrote instructions: one delivered
// (its entry now stale), one sent again (pending, no entry) and a new
// pending one. Open repairs the index from the records written since its
// marker.
func TestOpenIndexAfterOlderBaton(t *testing.T) {
	dir := t.TempDir()
	s := openOrFail(t, dir)
	seedInstructions(t, s)
	var all []instructionV1
	err := s.View(context.Background(), func(stx store.Tx) error {
		list, err := stx.ListInstructions("ws-a")
		for _, i := range list {
			v, _, gerr := getValue[instructionV1](stx.(*tx), instructionKey(i.ID))
			err = errors.Join(err, gerr)
			all = append(all, v)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	closeOrFail(t, s)

	// The older baton: records and the 'i' list only.
	var delivered, resent baton.InstructionID
	rawBadger(t, dir, func(db *badger.DB) error {
		return db.Update(func(txn *badger.Txn) error {
			for n := range all {
				v := &all[n]
				switch {
				case delivered == "" && v.State.Open():
					v.State, v.Session, delivered = store.InstructionDelivered, "s-2", v.ID
				case resent == "" && !v.State.Open():
					v.State, v.Session, resent = store.InstructionPending, "", v.ID
				default:
					continue
				}
				b, err := encode(*v)
				if err != nil {
					return err
				}
				if err := txn.Set(instructionKey(v.ID), b); err != nil {
					return err
				}
			}
			added := instructionV1{ID: "ws-a-new", Workspace: "ws-a", Text: "sent by an older baton",
				State: store.InstructionPending, Seq: all[len(all)-1].Seq + 1}
			all = append(all, added)
			b, err := encode(added)
			if err != nil {
				return err
			}
			return errors.Join(txn.Set(instructionKey(added.ID), b),
				txn.Set(formatKey, []byte(formatV1)),
				txn.Set(instructionIndex(added)[0].key, []byte(added.ID)),
				txn.Set(counterKey(tInstrByWS, "ws-a"), binary.BigEndian.AppendUint64(nil, added.Seq)))
		})
	})
	if delivered == "" || resent == "" {
		t.Fatalf("the seed lacks an open or a closed instruction")
	}

	s = openOrFail(t, dir)
	defer closeOrFail(t, s)
	var want []store.Instruction
	for _, v := range all {
		if v.State.Open() {
			want = append(want, v.record())
		}
	}
	checkOpen(t, s, fmt.Sprintf("after an older baton delivered %s, sent %s again and added one", delivered, resent),
		map[baton.WorkspaceID][]store.Instruction{"ws-a": want})
}

// TestOpenIndexBatches backfills the sets of more workspaces than one
// badger transaction of ProfileSmall holds.
func TestOpenIndexBatches(t *testing.T) {
	const n = 3000
	ws := func(i int) baton.WorkspaceID { return baton.WorkspaceID(fmt.Sprintf("ws-%04d", i)) }
	dir := t.TempDir()
	s := openOrFail(t, dir)
	want := map[baton.WorkspaceID][]store.Instruction{}
	for lo := 0; lo < n; lo += 100 {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			for i := lo; i < lo+100; i++ {
				for _, st := range []store.InstructionState{store.InstructionDelivered, store.InstructionPending} {
					in := store.Instruction{ID: baton.InstructionID(fmt.Sprintf("i-%04d-%s", i, st)), Workspace: ws(i), State: st}
					if err := tx.InsertInstruction(in); err != nil {
						return err
					}
					if st.Open() {
						want[ws(i)] = []store.Instruction{in}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	closeOrFail(t, s)
	makeOld(t, dir)

	// The sets do not fit in one transaction of the store's badger.
	db, err := badger.Open(openIndexOptions.badgerOptions(dir, zap.NewNop(), false))
	if err != nil {
		t.Fatal(err)
	}
	txn := db.NewTransaction(true)
	var tooBig error
	for i := range n {
		if tooBig = txn.Set(openKey(ws(i)), appendSet(nil, []setEntry{{2, "i-0000-pending"}})); tooBig != nil {
			break
		}
	}
	txn.Discard()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(tooBig, badger.ErrTxnTooBig) {
		t.Fatalf("%d sets fit in one transaction (err %v): the test needs more", n, tooBig)
	}

	s = openOrFail(t, dir)
	defer closeOrFail(t, s)
	checkOpen(t, s, "after a backfill in batches", want)
}

// TestOpenSetCodec round-trips sets built by addEntry and removeEntry, and
// checks that malformed values are refused.
func TestOpenSetCodec(t *testing.T) {
	var set []setEntry
	for _, e := range []setEntry{{5, "b"}, {1, "z\x00"}, {5, "a"}, {300, string(make([]byte, 200))}, {1, "z\x00"}} {
		set = addEntry(set, e.seq, e.id)
	}
	set = removeEntry(removeEntry(set, 5, "b"), 7, "none")
	want := []setEntry{{1, "z\x00"}, {5, "a"}, {300, string(make([]byte, 200))}}
	if d := cmp.Diff(want, set, cmp.AllowUnexported(setEntry{})); d != "" {
		t.Fatalf("addEntry and removeEntry (-want +got):\n%s", d)
	}
	b := appendSet(nil, set)
	got, err := decodeSet(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(setEntry{})); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	bad := map[string][]byte{
		"empty":        {},
		"truncated":    b[:len(b)-1],
		"short":        b[:5],
		"no id":        appendSet(nil, []setEntry{{1, ""}}),
		"out of order": appendSet(nil, []setEntry{{5, "a"}, {1, "b"}}),
		"duplicate":    appendSet(nil, []setEntry{{5, "a"}, {5, "a"}}),
	}
	for name, v := range bad {
		if set, err := decodeSet(v); err == nil {
			t.Errorf("%s: decoded %v, want an error", name, set)
		}
	}
}

// TestOpenInstructionsAcrossWorkspaces puts an open instruction into
// another workspace: it leaves the open instructions of the first and
// joins those of the second, and a closed one moved joins neither.
func TestOpenInstructionsAcrossWorkspaces(t *testing.T) {
	s := openOrFail(t, t.TempDir())
	defer closeOrFail(t, s)
	ctx := context.Background()
	open1 := store.Instruction{ID: "i-1", Workspace: "ws-a", State: store.InstructionPending}
	closed := store.Instruction{ID: "i-2", Workspace: "ws-a", State: store.InstructionCancelled}
	err := s.Update(ctx, func(tx store.Tx) error {
		return errors.Join(tx.InsertInstruction(open1), tx.InsertInstruction(closed))
	})
	if err != nil {
		t.Fatal(err)
	}
	open1.Workspace, open1.State, closed.Workspace = "ws-b", store.InstructionUnknown, "ws-b"
	if err := s.Update(ctx, func(tx store.Tx) error {
		return errors.Join(tx.PutInstruction(open1), tx.PutInstruction(closed))
	}); err != nil {
		t.Fatal(err)
	}
	checkOpen(t, s, "after the moves", map[baton.WorkspaceID][]store.Instruction{"ws-a": nil, "ws-b": {open1}})
}
