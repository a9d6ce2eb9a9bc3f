package badgerstore_test

import (
	"context"
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
	for _, n := range []int{10, 10000} {
		st := launchHistory(b, n)
		b.Run(fmt.Sprintf("launches=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := st.View(context.Background(), readLiveLaunches); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
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
	st := open(b, b.TempDir(), badgerstore.Options{})
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	id := func(i int) baton.LaunchID { return baton.LaunchID(fmt.Sprintf("l-%06d", i)) }
	const batch = 500
	for lo := 0; lo <= n; lo += batch {
		hi := min(lo+batch, n+1)
		err := st.Update(ctx, func(tx store.Tx) error {
			for i := lo; i < hi; i++ {
				err := tx.InsertLaunch(store.Launch{ID: id(i), Workspace: "ws-a", Session: "s-1", Holder: "holder-1",
					Engine: "demo", State: store.LaunchLive, CreatedAt: now, UpdatedAt: now})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			err = st.Update(ctx, func(tx store.Tx) error {
				for i := lo; i < hi; i++ {
					if i == n/2 {
						continue
					}
					l, err := tx.GetLaunch(id(i))
					if err != nil {
						return err
					}
					l.State = store.LaunchGone
					if err := tx.PutLaunch(l); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return st
}
