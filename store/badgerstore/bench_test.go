package badgerstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// syncName names a durability in test names: "sync" or "nosync".
func syncName(noSync bool) string {
	if noSync {
		return "nosync"
	}
	return "sync"
}

// profileName names a memory profile in test names: "default" or "small".
func profileName(small bool) string {
	if small {
		return "small"
	}
	return "default"
}

// BenchmarkUpdate measures the store write of a handoff transition: one
// Update that reads and puts one handoff (with one attempt in its History),
// in each durability mode. With DurabilitySync the fsync dominates; compare
// store/memstore's BenchmarkUpdate for the bare bookkeeping.
func BenchmarkUpdate(b *testing.B) {
	for _, noSync := range []bool{false, true} {
		b.Run(syncName(noSync), func(b *testing.B) {
			s := open(b, b.TempDir(), badgerstore.Options{NoSync: noSync})
			ctx := context.Background()
			h := store.Handoff{
				ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping,
				History:   []store.AttemptRecord{{Attempt: 1, Outcome: store.StateFailed, EndedAt: time.Now()}},
				CreatedAt: time.Now(),
			}
			if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutHandoff(h) }); err != nil {
				b.Fatal(err)
			}
			put := func(tx store.Tx) error {
				cur, err := tx.GetHandoff(h.ID)
				if err != nil {
					return err
				}
				cur.Attempt++
				return tx.PutHandoff(cur)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Update(ctx, put); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// BenchmarkView measures a View that reads one handoff by id.
func BenchmarkView(b *testing.B) {
	s := open(b, b.TempDir(), badgerstore.Options{})
	ctx := context.Background()
	h := store.Handoff{ID: "h-1", Workspace: "ws-a", RequestID: "r-1", State: store.StateStopping,
		History: []store.AttemptRecord{{Attempt: 1}}}
	if err := s.Update(ctx, func(tx store.Tx) error { return tx.PutHandoff(h) }); err != nil {
		b.Fatal(err)
	}
	get := func(tx store.Tx) error { _, err := tx.GetHandoff("h-1"); return err }
	b.ReportAllocs()
	for b.Loop() {
		if err := s.View(ctx, get); err != nil {
			b.Fatal(err)
		}
	}
}

// interleaveViews runs read in a View of small, then of large, op by op,
// so that the machine's load weighs on both alike, and reports each one's
// ns per View (ns/view-10 and ns/view-10000: small and large are the
// stores of a workspace with a history of 10 and of 10,000) and their
// ratio.
func interleaveViews(b *testing.B, read func(store.Tx) error, small, large *badgerstore.Store) {
	b.Helper()
	ctx := context.Background()
	var spent [2]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for k, st := range []*badgerstore.Store{small, large} {
			start := time.Now()
			if err := st.View(ctx, read); err != nil {
				b.Fatal(err)
			}
			spent[k] += time.Since(start)
		}
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "ns/view-10")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "ns/view-10000")
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
}

// putSession puts s and returns it as stored (with the Seq the store gave).
func putSession(tx store.Tx, s store.Session) (store.Session, error) {
	if err := tx.PutSession(s); err != nil {
		return store.Session{}, err
	}
	return tx.GetSession(s.ID)
}
