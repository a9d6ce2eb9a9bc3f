package workspace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// cfgs are the engine configurations of the random sessions.
var cfgs = [2]baton.EngineConfig{{Engine: "demo", Model: "a"}, {Engine: "demo", Model: "a", Account: "work"}}

// checkKept compares what workspace ws keeps (current session, running
// list, ranking list and links) with what the full rule derives from its
// sessions, and returns the differences.
func checkKept(tx store.Tx, ws baton.WorkspaceID) (string, error) {
	w, err := tx.GetWorkspace(ws)
	if err != nil {
		return "", err
	}
	all, err := tx.ListSessions(ws)
	if err != nil {
		return "", err
	}
	type kept struct {
		Resume   [2]baton.SessionID // implicitResume for cfgs[0], cfgs[1]
		Current  baton.SessionID
		Running  []baton.SessionID
		Ranking  []baton.SessionID
		Links    map[baton.SessionID][2]baton.SessionID
		Counter  bool // ActivationCounter >= every order
		Ranked   bool
		ListOkay bool // walking RankBelow from RankHead ends
	}
	var want, got kept
	want.Links, got.Links = map[baton.SessionID][2]baton.SessionID{}, map[baton.SessionID][2]baton.SessionID{}
	cur, _ := SelectCurrent(all)
	want.Current, want.Counter, want.Ranked, want.ListOkay = cur.ID, true, true, true
	var eligible []store.Session
	for _, s := range all {
		if s.ActivationOrder >= 0 {
			eligible = append(eligible, s)
			if s.Status == store.SessionRunning {
				want.Running = append(want.Running, s.ID)
			}
		}
	}
	sorted := SortByCurrent(eligible)
	for i, s := range sorted {
		want.Ranking = append(want.Ranking, s.ID)
		var l [2]baton.SessionID
		if i > 0 {
			l[0] = sorted[i-1].ID
		}
		if i+1 < len(sorted) {
			l[1] = sorted[i+1].ID
		}
		want.Links[s.ID] = l
	}
	if !w.Ranked {
		// Not ranked yet: only the current session is kept.
		return cmp.Diff(want.Current, w.CurrentSession), nil
	}
	for i, cfg := range cfgs {
		if r, ok := SelectImplicitResume(all, cfg); ok {
			want.Resume[i] = r.ID
		}
		r, ok, err := ImplicitResume(tx, w, cfg)
		if err != nil {
			return "", err
		}
		if ok {
			got.Resume[i] = r.ID
		}
	}
	got.Current, got.Ranked = w.CurrentSession, w.Ranked
	got.Running = slices.Clone(w.Running)
	slices.Sort(got.Running)
	slices.Sort(want.Running)
	got.Counter = true
	byID := map[baton.SessionID]store.Session{}
	for _, s := range all {
		byID[s.ID] = s
		got.Counter = got.Counter && w.ActivationCounter >= s.ActivationOrder
		if s.RankAbove != "" || s.RankBelow != "" || w.RankHead == s.ID {
			got.Links[s.ID] = [2]baton.SessionID{s.RankAbove, s.RankBelow}
		}
	}
	got.ListOkay = true
	for id := w.RankHead; id != ""; id = byID[id].RankBelow {
		if len(got.Ranking) > len(all) {
			got.ListOkay = false
			break
		}
		got.Ranking = append(got.Ranking, id)
	}
	return cmp.Diff(want, got), nil
}

// TestKeptRankingAgreesWithTheFullRule drives random workspaces (legacy
// order-0 rows with any status and times, rolled-back rows, a workspace
// written without a ranking) through random activations, ends (the clock
// sometimes going back) and rollbacks, the way package session makes them
// without a scan, and checks after every step that the current session,
// the running list and the ranking list are what the full rule derives
// from the rows.
func TestKeptRankingAgreesWithTheFullRule(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	statuses := []store.SessionStatus{store.SessionRunning, store.SessionIdle, store.SessionEnded, store.SessionEnded}
	const ws = baton.WorkspaceID("ws")
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 2))
		at := func() time.Time { return base.Add(time.Duration(rng.IntN(200)) * time.Minute) }
		st := memstore.New()
		n := rng.IntN(6)
		if seed%10 == 0 {
			n = 3 * maxResumeWalk // long enough for implicitResume to fall back
		}
		native := func() string {
			if rng.IntN(4) == 0 {
				return ""
			}
			return "native"
		}
		var ids []baton.SessionID
		err := st.Update(ctx, func(tx store.Tx) error {
			// Ranked is false: written by an earlier release, whose rows
			// are at order 0 or were activated or rolled back then.
			if err := tx.PutWorkspace(store.Workspace{ID: ws, CreatedAt: base}); err != nil {
				return err
			}
			var counter int64
			for i := range n {
				order := int64(0)
				switch rng.IntN(3) {
				case 1:
					counter++
					order = counter
				case 2:
					order = RolledBack
				}
				s := store.Session{ID: baton.SessionID(fmt.Sprint("old-", i)), Workspace: ws, Status: statuses[rng.IntN(len(statuses))],
					ActivationOrder: order, StartedAt: at(), CreatedAt: base, Config: cfgs[rng.IntN(2)], NativeID: native()}
				if rng.IntN(2) == 0 {
					s.EndedAt = at()
				}
				if err := tx.PutSession(s); err != nil {
					return err
				}
				ids = append(ids, s.ID)
			}
			w, err := tx.GetWorkspace(ws)
			if err != nil {
				return err
			}
			// The current session as the earlier release kept it.
			all, err := tx.ListSessions(ws)
			if err != nil {
				return err
			}
			cur, _ := SelectCurrent(all)
			w.ActivationCounter, w.CurrentSession = counter, cur.ID
			return tx.PutWorkspace(w)
		})
		if err != nil {
			t.Fatal(err)
		}
		var log []string
		for step := range 30 {
			now := at()
			var op string
			err := st.Update(ctx, func(tx store.Tx) error {
				k := rng.IntN(6)
				if len(ids) == 0 {
					k = 0
				}
				switch k {
				case 0: // a fresh start, or a transfer's target (order -1, idle)
					id := baton.SessionID(fmt.Sprint("new-", step))
					ids = append(ids, id)
					if rng.IntN(2) == 0 {
						op = "target " + string(id)
						err := tx.PutSession(store.Session{ID: id, Workspace: ws, Status: store.SessionIdle, ActivationOrder: RolledBack, CreatedAt: now,
							Config: cfgs[rng.IntN(2)], NativeID: native()})
						return err
					}
					op = "fresh " + string(id)
					if err := tx.PutSession(store.Session{ID: id, Workspace: ws, Status: store.SessionRunning, StartedAt: now, CreatedAt: now,
						Config: cfgs[rng.IntN(2)], NativeID: native()}); err != nil {
						return err
					}
					_, err := Activate(tx, id, now)
					return err
				case 1: // a start or resume of an existing row (or a restoration: not running)
					id := ids[rng.IntN(len(ids))]
					s, err := tx.GetSession(id)
					if err != nil {
						return err
					}
					if rng.IntN(2) == 0 {
						s.Status, s.StartedAt, s.EndedAt, s.EndReason = store.SessionRunning, now, time.Time{}, ""
						if err := tx.PutSession(s); err != nil {
							return err
						}
					}
					op = "activate " + string(id)
					_, err = Activate(tx, id, now)
					return err
				case 2, 3: // an end of a running (or idle) row
					id := ids[rng.IntN(len(ids))]
					s, err := tx.GetSession(id)
					if err != nil || s.Status == store.SessionEnded {
						op = "recompute (nothing to end)"
						if err != nil {
							return err
						}
						return Recompute(tx, ws, now)
					}
					op = "end " + string(id)
					s.Status, s.EndedAt, s.EndReason = store.SessionEnded, now, "ended"
					return RecordEnd(tx, s, now)
				case 4:
					id := ids[rng.IntN(len(ids))]
					op = "rollback " + string(id)
					return Rollback(tx, id, "rolled back", now)
				default:
					op = "recompute"
					return Recompute(tx, ws, now)
				}
			})
			if err != nil {
				t.Fatalf("seed %d step %d %s: %v", seed, step, op, err)
			}
			log = append(log, op)
			var diff string
			if err := st.View(ctx, func(tx store.Tx) (err error) { diff, err = checkKept(tx, ws); return err }); err != nil {
				t.Fatal(err)
			}
			if diff != "" {
				t.Fatalf("seed %d after %v: kept state differs from the full rule (-want +got):\n%s", seed, log, diff)
			}
		}
	}
}

// TestLongUnrankedWorkspace: a workspace written by an earlier release
// with more sessions than a transaction links inline keeps working as
// before (its current session found by reading its sessions) until
// Reconcile links it over several transactions; from then on what it keeps
// agrees with the full rule.
func TestLongUnrankedWorkspace(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const ws = baton.WorkspaceID("ws")
	const n = rankChunk + maxInlineLinks
	st := memstore.New()
	err := st.Update(ctx, func(tx store.Tx) error {
		if err := tx.PutWorkspace(store.Workspace{ID: ws, ActivationCounter: n, CreatedAt: now}); err != nil {
			return err
		}
		for i := range n {
			order := int64(i + 1)
			if i%3 == 0 {
				order = 0 // legacy
			}
			if err := tx.PutSession(store.Session{ID: baton.SessionID(fmt.Sprintf("s-%04d", i)), Workspace: ws,
				Status: store.SessionEnded, ActivationOrder: order, StartedAt: now.Add(time.Duration(i) * time.Second), CreatedAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	kept := func(wantRanked bool) {
		t.Helper()
		err := st.View(ctx, func(tx store.Tx) error {
			w, err := tx.GetWorkspace(ws)
			if err != nil {
				return err
			}
			if w.Ranked != wantRanked {
				t.Fatalf("Ranked = %v, want %v", w.Ranked, wantRanked)
			}
			all, err := tx.ListSessions(ws)
			if err != nil {
				return err
			}
			if cur, _ := SelectCurrent(all); w.CurrentSession != cur.ID {
				t.Fatalf("current %q, the rule selects %q", w.CurrentSession, cur.ID)
			}
			diff, err := checkKept(tx, ws)
			if diff != "" {
				t.Fatalf("kept state differs from the full rule (-want +got):\n%s", diff)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	update := func(fn func(tx store.Tx) error) {
		t.Helper()
		if err := st.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	update(func(tx store.Tx) error { _, err := Activate(tx, "s-0003", now); return err })
	update(func(tx store.Tx) error { return Rollback(tx, "s-0003", "rolled back", now) })
	kept(false)
	if err := RankAll(ctx, st, func() time.Time { return now }); err != nil {
		t.Fatal(err)
	}
	kept(true)
	update(func(tx store.Tx) error { _, err := Activate(tx, "s-0000", now); return err })
	update(func(tx store.Tx) error { return Rollback(tx, "s-0000", "rolled back", now) })
	kept(true)
}
