package badgerstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// BenchmarkBadgerLiveLaunches reads a workspace's live launches (one)
// after launches=N others were recorded and confirmed gone, as every turn
// of a workspace is a launch. Target (read from the figures, never
// asserted by time): launches=10000 within 1.2x launches=10 (interleaved:
// BenchmarkBadgerLiveLaunchesInterleaved). The live launches of a
// workspace are one value that lists them (see the package doc), so the
// read costs the live ones only; a list of keys would also step over the
// tombstone each ended launch leaves until a compaction drops it.
func BenchmarkBadgerLiveLaunches(b *testing.B) {
	benchHistoryViews(b, "launches", launchHistory, func(int) func(store.Tx) error { return readLiveLaunches })
}

// BenchmarkBadgerLiveLaunchesInterleaved alternates the two workspaces of
// BenchmarkBadgerLiveLaunches (10 and 10,000 ended launches), op by op,
// so that the machine's load weighs on both alike: it reports each one's
// ns per View and their ratio.
func BenchmarkBadgerLiveLaunchesInterleaved(b *testing.B) {
	small, large := launchHistory(b, 10), launchHistory(b, 10_000)
	interleaveViews(b, readLiveLaunches, small, large)
}

// readLiveLaunches reads the live launches of ws-a and checks that there
// is one.
func readLiveLaunches(tx store.Tx) error {
	l, err := tx.LiveLaunches("ws-a")
	if err == nil && len(l) != 1 {
		err = fmt.Errorf("%d live launches, want 1", len(l))
	}
	return err
}

// launchHistory opens a store (default Options) whose workspace ws-a had
// n+1 launches, each recorded live and then (in a later Update) gone, but
// for the one in the middle, still live.
func launchHistory(b *testing.B, n int) *badgerstore.Store {
	b.Helper()
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	id := func(i int) baton.LaunchID { return baton.LaunchID(fmt.Sprintf("l-%06d", i)) }
	return history(b, n, func(tx store.Tx, i int) error {
		return tx.PutLaunch(store.Launch{ID: id(i), Workspace: "ws-a", Session: "s-1", Holder: "holder-1",
			Engine: "demo", CreatedAt: now, UpdatedAt: now})
	}, func(tx store.Tx, i int) error {
		l, err := tx.GetLaunch(id(i))
		if err != nil {
			return err
		}
		l.Gone = true
		return tx.PutLaunch(l)
	})
}
