package badgerstore

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

var openIndexOptions = Options{Small: true, NoSync: true}

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

// TestOpenSetCodec round-trips sets built by withEntry, and
// checks that malformed values are refused.
func TestOpenSetCodec(t *testing.T) {
	var set []setEntry
	for _, e := range []setEntry{{5, "b"}, {1, "z\x00"}, {5, "a"}, {300, string(make([]byte, 200))}, {1, "z\x00"}} {
		set = withEntry(set, e, true)
	}
	set = withEntry(withEntry(set, setEntry{5, "b"}, false), setEntry{7, "none"}, false)
	want := []setEntry{{1, "z\x00"}, {5, "a"}, {300, string(make([]byte, 200))}}
	if d := cmp.Diff(want, set, cmp.AllowUnexported(setEntry{})); d != "" {
		t.Fatalf("withEntry (-want +got):\n%s", d)
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
		return errors.Join(tx.PutInstruction(open1), tx.PutInstruction(closed))
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
