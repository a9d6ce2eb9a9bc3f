package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/batonhq/baton/host/hosttest"
)

// A successor refuses to rename over an entry that is not the one it
// probed, and leaves both entries alone.
func TestReplaceIfSameRefusesAReplacedEntry(t *testing.T) {
	t.Parallel()
	dir := hosttest.TempDir(t)
	public, side, intruder := filepath.Join(dir, "h.sock"), filepath.Join(dir, "side.sock"), filepath.Join(dir, "x.sock")
	for _, p := range []string{public, side, intruder} {
		ln, err := listenUnix(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ln.Close() })
	}
	probed, _, err := statID(public)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(intruder, public); err != nil {
		t.Fatal(err)
	}
	now, _, _ := statID(public)
	if err := replaceIfSame(side, public, probed); !errors.Is(err, errSocketReplaced) {
		t.Fatalf("replaceIfSame = %v, want socket_replaced", err)
	}
	if after, _, _ := statID(public); after != now {
		t.Error("the public entry was replaced anyway")
	}
	if _, err := os.Lstat(side); err != nil {
		t.Errorf("side socket gone: %v", err)
	}
	if err := replaceIfSame(side, public, now); err != nil {
		t.Fatalf("replaceIfSame with the current entry = %v", err)
	}
	if err := os.Remove(public); err != nil {
		t.Fatal(err)
	}
	if err := replaceIfSame(side, public, now); !errors.Is(err, errSocketReplaced) {
		t.Errorf("replaceIfSame over an absent entry = %v, want socket_replaced", err)
	}
}

func TestEntryWatchCountsAbsenceOnlyAfterThreePolls(t *testing.T) {
	t.Parallel()
	own, other := fileID{dev: 1, ino: 10}, fileID{dev: 1, ino: 11}
	type obs struct {
		id     fileID
		exists bool
	}
	gone := obs{}
	tests := []struct {
		name string
		seq  []obs
		want []verdict
	}{
		{"ours", []obs{{own, true}, {own, true}}, []verdict{stillOurs, stillOurs}},
		{"replaced at once", []obs{{own, true}, {other, true}}, []verdict{stillOurs, replaced}},
		{"absent three times", []obs{gone, gone, gone}, []verdict{stillOurs, stillOurs, vanished}},
		{"absence interrupted", []obs{gone, gone, {own, true}, gone, gone}, []verdict{stillOurs, stillOurs, stillOurs, stillOurs, stillOurs}},
		{"absent then replaced", []obs{gone, {other, true}}, []verdict{stillOurs, replaced}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := entryWatch{own: own}
			var got []verdict
			for _, o := range tt.seq {
				got = append(got, w.observe(o.id, o.exists))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v", got)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("verdicts = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
