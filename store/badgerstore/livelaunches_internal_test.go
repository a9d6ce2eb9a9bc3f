package badgerstore

import (
	"context"
	"errors"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// checkLive compares LiveLaunches of every workspace of want with it.
func checkLive(t *testing.T, s *Store, when string, want map[baton.WorkspaceID][]store.Launch) {
	t.Helper()
	checkReads(t, s, when, "LiveLaunches", store.Tx.LiveLaunches, want)
}

// TestLiveLaunchesAcrossWorkspaces puts a live launch into another
// workspace and ends one: the first leaves the live launches of its
// workspace and joins those of the other, the second leaves them; the
// global list follows.
func TestLiveLaunchesAcrossWorkspaces(t *testing.T) {
	s := openOrFail(t, t.TempDir())
	defer closeOrFail(t, s)
	moved := store.Launch{ID: "l-1", Workspace: "ws-a"}
	ended := store.Launch{ID: "l-2", Workspace: "ws-a"}
	for _, step := range []func(tx store.Tx) error{
		func(tx store.Tx) error { return errors.Join(tx.PutLaunch(moved), tx.PutLaunch(ended)) },
		func(tx store.Tx) error {
			moved.Workspace, ended.Gone = "ws-b", true
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
		set    wsSet
		insert func(tx store.Tx, id string) error
		get    func(tx store.Tx, id string) error
	}{
		{"open instructions", openInstructions,
			func(tx store.Tx, id string) error {
				return tx.PutInstruction(store.Instruction{ID: baton.InstructionID(id), Workspace: "ws-a", State: store.InstructionPending})
			},
			func(tx store.Tx, id string) error { _, err := tx.GetInstruction(baton.InstructionID(id)); return err }},
		{"live launches", liveLaunches,
			func(tx store.Tx, id string) error {
				return tx.PutLaunch(store.Launch{ID: baton.LaunchID(id), Workspace: "ws-a"})
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
