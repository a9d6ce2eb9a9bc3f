package badgerstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// TestCachedReadsEqualDecodedReads checks the caches of decoded records: a
// record read back in the transaction that wrote it (what the transaction
// keeps), after its commit (served from what the commit cached),
// read again (served from what the first read cached) and read after a
// reopen (decoded, the cache being empty) is the same record, also when
// its JSON does not decode to what was written (invalid UTF-8, which the
// encoder replaces), and a caller changing what it got changes no later
// read.
func TestCachedReadsEqualDecodedReads(t *testing.T) {
	zone := time.FixedZone("UTC+2", 2*3600)
	tests := []struct {
		name string
		h    store.Handoff
	}{
		{"plain", store.Handoff{Report: "# Report\nfine"}},
		{"history and local times", store.Handoff{
			History:   []store.AttemptRecord{{Attempt: 1, Outcome: store.StateFailed, Error: "boom", EndedAt: time.Now()}},
			CreatedAt: time.Now().In(zone), UpdatedAt: time.Date(2026, 11, 30, 12, 0, 0, 1, zone)}},
		{"invalid UTF-8", store.Handoff{Report: "bad \xff byte", Error: "\xc3"}},
		{"a literal \\ufffd", store.Handoff{Report: `text \ufffd text`}},
		{"U+FFFD itself", store.Handoff{Report: "\ufffd"}},
	}
	dir := t.TempDir()
	s, err := badgerstore.Open(dir, badgerstore.Options{Small: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	get := func(s *badgerstore.Store, id baton.HandoffID) store.Handoff {
		t.Helper()
		var h store.Handoff
		if err := s.View(ctx, func(tx store.Tx) error { h, err = tx.GetHandoff(id); return err }); err != nil {
			t.Fatal(err)
		}
		return h
	}
	first, inTx := map[baton.HandoffID]store.Handoff{}, map[baton.HandoffID]store.Handoff{}
	for i, tt := range tests {
		h := tt.h
		h.ID, h.Workspace, h.RequestID, h.State = baton.HandoffID(tt.name), "ws-a", tt.name, store.StateCompleted
		if err := s.Update(ctx, func(tx store.Tx) error {
			if i == 0 {
				if err := tx.PutWorkspace(store.Workspace{ID: "ws-a"}); err != nil {
					return err
				}
			}
			if err := tx.PutHandoff(h); err != nil {
				return err
			}
			// Read back in the writing transaction (the record it keeps).
			inTx[h.ID], err = tx.GetHandoff(h.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		got := get(s, h.ID)
		first[h.ID] = get(s, h.ID)
		if diff := cmp.Diff(first[h.ID], got); diff != "" {
			t.Errorf("%s: second read differs from the first (-second +first):\n%s", tt.name, diff)
		}
		if len(got.History) > 0 {
			got.History[0].Error = "changed by the caller"
			if again := get(s, h.ID); again.History[0].Error != tt.h.History[0].Error {
				t.Errorf("%s: a caller's change reached a later read: %q", tt.name, again.History[0].Error)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, badgerstore.Options{Small: true, NoSync: true})
	for _, tt := range tests {
		id := baton.HandoffID(tt.name)
		decoded := get(s, id)
		if diff := cmp.Diff(decoded, first[id]); diff != "" {
			t.Errorf("%s: cached read differs from a decoded one (-decoded +cached):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(decoded, inTx[id]); diff != "" {
			t.Errorf("%s: read in the writing transaction differs from a decoded one (-decoded +in the transaction):\n%s", tt.name, diff)
		}
	}
}
