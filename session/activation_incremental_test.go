package session_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// TestActivateAgreesWithTheFullRule: Activate decides the current session
// without reading the workspace's sessions unless another one runs; on
// random workspaces (any mix of running, idle, ended, rolled-back and
// legacy order-0 rows, the cache refreshed first), the current session it
// leaves is the one the full rule selects.
func TestActivateAgreesWithTheFullRule(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	statuses := []store.SessionStatus{store.SessionRunning, store.SessionIdle, store.SessionEnded, store.SessionEnded}
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		st := memstore.New()
		const ws = baton.WorkspaceID("ws")
		n := 1 + rng.IntN(8)
		var ids []baton.SessionID
		err := st.Update(ctx, func(tx store.Tx) error {
			if err := tx.PutWorkspace(store.Workspace{ID: ws, CreatedAt: base}); err != nil {
				return err
			}
			// Orders as activation leaves them: each positive one unique;
			// rolled-back (-1) and legacy (0) rows besides.
			orders := rng.Perm(n)
			for i := range n {
				order := int64(orders[i] + 1)
				if k := rng.IntN(4); k < 2 {
					order = int64(k) - 1
				}
				started := base.Add(time.Duration(rng.IntN(100)) * time.Minute)
				s := store.Session{ID: baton.SessionID(fmt.Sprint("s-", i)), Workspace: ws,
					Status: statuses[rng.IntN(len(statuses))], ActivationOrder: order, StartedAt: started, CreatedAt: base}
				if err := tx.PutSession(s); err != nil {
					return err
				}
				ids = append(ids, s.ID)
			}
			return workspace.Refresh(tx, ws, base)
		})
		if err != nil {
			t.Fatal(err)
		}
		for step := range 4 {
			id := ids[rng.IntN(len(ids))]
			var got, want baton.SessionID
			err := st.Update(ctx, func(tx store.Tx) error {
				if _, err := workspace.Activate(tx, id, base.Add(time.Duration(step)*time.Hour)); err != nil {
					return err
				}
				w, err := tx.GetWorkspace(ws)
				if err != nil {
					return err
				}
				all, err := tx.ListSessions(ws)
				if err != nil {
					return err
				}
				got = w.CurrentSession
				if cur, ok := workspace.SelectCurrent(all); ok {
					want = cur.ID
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("seed %d step %d: Activate(%s) left current %q, the rule says %q", seed, step, id, got, want)
			}
		}
	}
}
