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
// of a workspace is a launch. It measures a known cost, without a target:
// a launch that ends leaves its key in the list of live launches as a
// tombstone, which every scan of the list steps over until a compaction
// drops it (see the package doc), so the read grows with the launches
// ended lately, not only with the live ones.
func BenchmarkBadgerLiveLaunches(b *testing.B) {
	for _, n := range []int{10, 10000} {
		st := launchHistory(b, n)
		b.Run(fmt.Sprintf("launches=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				err := st.View(context.Background(), func(tx store.Tx) error {
					l, err := tx.LiveLaunches("ws-a")
					if err == nil && len(l) != 1 {
						err = fmt.Errorf("%d live launches, want 1", len(l))
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
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
