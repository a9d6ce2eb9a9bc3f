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

// The benchmarks of the instruction reads. Target (read from the figures,
// never asserted by time): BenchmarkBadgerOpenInstructions/instructions=10000
// <= 1.2x instructions=10 (interleaved:
// BenchmarkBadgerOpenInstructionsInterleaved), where ListInstructions
// grows with the workspace's history (BenchmarkBadgerListInstructions).

// instructionHistory opens a store (default Options) whose workspace
// ws-a was sent n+1 instructions, as a workspace is: each inserted
// pending, then (in a later Update) delivered, but for the one in the
// middle, still pending. Every delivery takes an instruction out of the
// open set: a store that kept one key per open instruction would leave a
// deleted key behind each time (see the key layout in codec.go).
func instructionHistory(b *testing.B, n int) *badgerstore.Store {
	b.Helper()
	now := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	id := func(i int) baton.InstructionID { return baton.InstructionID(fmt.Sprintf("i-%06d", i)) }
	return history(b, n, func(tx store.Tx, i int) error {
		return tx.PutInstruction(store.Instruction{ID: id(i), Workspace: "ws-a",
			Text: "run the tests again and fix what fails", State: store.InstructionPending, CreatedAt: now, UpdatedAt: now})
	}, func(tx store.Tx, i int) error {
		in, err := tx.GetInstruction(id(i))
		if err != nil {
			return err
		}
		in.State, in.Session = store.InstructionDelivered, "s-1"
		return tx.PutInstruction(in)
	})
}

// history opens a store (default Options) and runs add for 0..n, then
// retire for each but n/2, 500 at a time: the records a workspace had,
// each ended but the one in the middle.
func history(b *testing.B, n int, add, retire func(tx store.Tx, i int) error) *badgerstore.Store {
	b.Helper()
	st := open(b, b.TempDir(), badgerstore.Options{})
	const batch = 500
	for lo := 0; lo <= n; lo += batch {
		hi := min(lo+batch, n+1)
		each := func(fn func(store.Tx, int) error, skip int) func(store.Tx) error {
			return func(tx store.Tx) error {
				for i := lo; i < hi; i++ {
					if i == skip {
						continue
					}
					if err := fn(tx, i); err != nil {
						return err
					}
				}
				return nil
			}
		}
		err := st.Update(context.Background(), each(add, -1))
		if err == nil {
			err = st.Update(context.Background(), each(retire, n/2))
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return st
}

// readInstructions returns a View function that reads ws-a's open
// instructions (or all of them) and checks how many it got.
func readInstructions(all bool, want int) func(store.Tx) error {
	return func(tx store.Tx) error {
		read := tx.OpenInstructions
		if all {
			read = tx.ListInstructions
		}
		got, err := read("ws-a")
		if err == nil && len(got) != want {
			err = fmt.Errorf("read %d instructions, want %d", len(got), want)
		}
		return err
	}
}

// BenchmarkBadgerOpenInstructions is a View that reads the open
// instructions of a workspace sent 10 or 10,000 instructions since
// delivered and one still pending (see instructionHistory): it reads the
// pending one only, whatever the history.
func BenchmarkBadgerOpenInstructions(b *testing.B) {
	benchHistoryViews(b, "instructions", instructionHistory, func(int) func(store.Tx) error { return readInstructions(false, 1) })
}

// benchHistoryViews runs, for a history of 10 and of 10,000 records
// (made by history), the View read(n) returns, as sub-benchmarks named
// <name>=n.
func benchHistoryViews(b *testing.B, name string, history func(*testing.B, int) *badgerstore.Store, read func(n int) func(store.Tx) error) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("%s=%d", name, n), func(b *testing.B) {
			st, fn := history(b, n), read(n)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := st.View(ctx, fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBadgerListInstructions is the same View reading every
// instruction (what the open ones were read from before
// OpenInstructions), for contrast.
func BenchmarkBadgerListInstructions(b *testing.B) {
	benchHistoryViews(b, "instructions", instructionHistory, func(n int) func(store.Tx) error { return readInstructions(true, n+1) })
}

// BenchmarkBadgerOpenInstructionsInterleaved alternates the two
// workspaces of BenchmarkBadgerOpenInstructions (10 and 10,000 delivered
// instructions), op by op, so that the machine's load weighs on both
// alike: it reports each one's ns per View and their ratio.
func BenchmarkBadgerOpenInstructionsInterleaved(b *testing.B) {
	small, large := instructionHistory(b, 10), instructionHistory(b, 10_000)
	interleaveViews(b, readInstructions(false, 1), small, large)
}
