package session_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// at is t0 plus h hours.
func at(h int) time.Time { return t0.Add(time.Duration(h) * time.Hour) }

// row is a compact session for selection tables.
func row(id string, order int64, status store.SessionStatus, started, ended int) store.Session {
	s := store.Session{ID: baton.SessionID(id), Config: cfgA, NativeID: "n-" + id, ActivationOrder: order, Status: status}
	if started >= 0 {
		s.StartedAt = at(started)
	}
	if ended >= 0 {
		s.EndedAt = at(ended)
	}
	return s
}

const (
	ended   = store.SessionEnded
	running = store.SessionRunning
	never   = -1 // no time
)

func TestSelectCurrent(t *testing.T) {
	tests := []struct {
		name     string
		sessions []store.Session
		want     baton.SessionID // "" means none
	}{
		{"none", nil, ""},
		{"only rolled back", []store.Session{row("a", workspace.RolledBack, ended, 1, 2)}, ""},
		{"highest order", []store.Session{row("a", 3, ended, 5, 6), row("b", 7, ended, 1, 2), row("c", 5, ended, 8, 9)}, "b"},
		{"running first, even with a lower order", []store.Session{row("a", 9, ended, 1, 2), row("b", 2, running, 0, never)}, "b"},
		{"two running: highest order", []store.Session{row("a", 4, running, 1, never), row("b", 6, running, 0, never)}, "b"},
		{"rolled back never selected, even running", []store.Session{row("a", workspace.RolledBack, running, 9, never), row("b", 1, ended, 1, 2)}, "b"},
		{"ordered beats legacy", []store.Session{row("legacy", 0, ended, 8, 9), row("a", 1, ended, 1, 2)}, "a"},
		{"legacy: max(startedAt, endedAt)", []store.Session{row("a", 0, ended, 1, 6), row("b", 0, ended, 5, never)}, "a"},
		{"legacy: an end later than another start", []store.Session{row("a", 0, ended, 3, 4), row("b", 0, ended, 1, 5)}, "b"},
		{"legacy tie: later startedAt", []store.Session{row("a", 0, ended, 1, 5), row("b", 0, ended, 2, 5)}, "b"},
		{"legacy never started nor ended", []store.Session{row("a", 0, store.SessionIdle, never, never)}, "a"},
		{"legacy vs rolled back", []store.Session{row("a", workspace.RolledBack, ended, 8, 9), row("b", 0, ended, 1, 2)}, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := workspace.SelectCurrent(tt.sessions)
			if ok != (tt.want != "") || got.ID != tt.want {
				t.Fatalf("SelectCurrent = %q, %v; want %q", got.ID, ok, tt.want)
			}
		})
	}
}

func TestSelectImplicitResume(t *testing.T) {
	noNative := row("x", 9, ended, 8, 9)
	noNative.NativeID = ""
	other := row("o", 8, ended, 8, 9)
	other.Config = cfgOther
	alt := row("alt", 7, ended, 8, 9)
	alt.Config = cfgAlt
	model2 := row("m2", 6, ended, 1, 2)
	model2.Config = cfgA2
	tests := []struct {
		name     string
		sessions []store.Session
		cfg      baton.EngineConfig
		want     baton.SessionID
	}{
		{"none", nil, cfgA, ""},
		{"the current one", []store.Session{row("a", 1, ended, 1, 2), row("b", 2, ended, 3, 4)}, cfgA, "b"},
		{"native id required: older one", []store.Session{row("a", 1, ended, 1, 2), noNative}, cfgA, "a"},
		{"same engine required", []store.Session{row("a", 1, ended, 1, 2), other}, cfgA, "a"},
		{"same account required", []store.Session{row("a", 1, ended, 1, 2), alt}, cfgA, "a"},
		{"other account only", []store.Session{alt}, cfgA, ""},
		{"the other account's own", []store.Session{row("a", 1, ended, 1, 2), alt}, cfgAlt, "alt"},
		{"another model is the same engine and account", []store.Session{row("a", 1, ended, 1, 2), model2}, cfgA, "m2"},
		{"rolled back excluded", []store.Session{row("a", 1, ended, 1, 2), row("b", workspace.RolledBack, ended, 3, 4)}, cfgA, "a"},
		{"nothing on that engine", []store.Session{row("a", 1, ended, 1, 2)}, cfgOther, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := workspace.SelectImplicitResume(tt.sessions, tt.cfg)
			if ok != (tt.want != "") || got.ID != tt.want {
				t.Fatalf("SelectImplicitResume = %q, %v; want %q", got.ID, ok, tt.want)
			}
		})
	}
}

func TestSortByCurrent(t *testing.T) {
	in := []store.Session{row("a", 1, ended, 1, 2), row("b", 3, ended, 1, 2), row("legacy", 0, ended, 1, 9), row("c", 2, ended, 1, 2)}
	var got []baton.SessionID
	for _, s := range workspace.SortByCurrent(in) {
		got = append(got, s.ID)
	}
	if d := cmp.Diff([]baton.SessionID{"b", "c", "a", "legacy"}, got); d != "" {
		t.Fatalf("order (-want +got):\n%s", d)
	}
	if in[0].ID != "a" {
		t.Fatal("SortByCurrent changed its input")
	}
}

// orders returns each session's activation order, and the workspace's
// current session and counter.
func (f *fixture) orders() (map[baton.SessionID]int64, baton.SessionID, int64) {
	f.t.Helper()
	out := map[baton.SessionID]int64{}
	var ws store.Workspace
	if err := f.st.View(f.ctx, func(tx store.Tx) error {
		all, err := tx.ListSessions(f.ws)
		for _, s := range all {
			out[s.ID] = s.ActivationOrder
		}
		if err == nil {
			ws, err = tx.GetWorkspace(f.ws)
		}
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
	return out, ws.CurrentSession, ws.ActivationCounter
}

func TestActivateGivesMaxPlusOne(t *testing.T) {
	f := newFixture(t)
	a := f.insertSession(store.Session{ID: "a"})
	b := f.insertSession(store.Session{ID: "b"})
	c := f.insertSession(store.Session{ID: "c"})
	activate := func(id baton.SessionID) {
		t.Helper()
		f.update(func(tx store.Tx) error { _, err := workspace.Activate(tx, id, f.clk.Now()); return err })
	}
	steps := []struct {
		id      baton.SessionID
		want    map[baton.SessionID]int64
		counter int64
	}{
		{a.ID, map[baton.SessionID]int64{"a": 1, "b": 0, "c": 0}, 1},
		{b.ID, map[baton.SessionID]int64{"a": 1, "b": 2, "c": 0}, 2},
		{b.ID, map[baton.SessionID]int64{"a": 1, "b": 2, "c": 0}, 2}, // already highest: kept
		{a.ID, map[baton.SessionID]int64{"a": 3, "b": 2, "c": 0}, 3},
		{c.ID, map[baton.SessionID]int64{"a": 3, "b": 2, "c": 4}, 4},
	}
	for i, st := range steps {
		activate(st.id)
		got, cur, counter := f.orders()
		if d := cmp.Diff(st.want, got); d != "" {
			t.Fatalf("step %d: orders (-want +got):\n%s", i, d)
		}
		if cur != st.id || counter != st.counter {
			t.Fatalf("step %d: current %q counter %d; want %q %d", i, cur, counter, st.id, st.counter)
		}
	}
}

func TestRollbackLeavesNoCurrentWhenNothingQualifies(t *testing.T) {
	f := newFixture(t)
	a := f.insertSession(store.Session{ID: "a", ActivationOrder: 1})
	f.update(func(tx store.Tx) error { return workspace.Rollback(tx, a.ID, "rolled back", f.clk.Now()) })
	if _, err := f.svc.Current(f.ctx, f.ws); !errors.Is(err, session.ErrNoSession) {
		t.Fatalf("Current after rolling back the only session: %v, want ErrNoSession", err)
	}
	if got := f.session(a.ID); got.ActivationOrder != workspace.RolledBack || got.NativeID == "" {
		t.Fatalf("rolled back row = %+v, want order -1 with its native id kept", got)
	}
	// The next ordinary message starts fresh: the rolled-back session is no
	// implicit-resume choice.
	s := f.start(session.TurnRequest{Prompt: "next"})
	if s.ID == a.ID {
		t.Fatal("an ordinary start resumed a rolled-back session")
	}
	if l := f.launches(); len(l) != 1 || l[0].Req.Mode != "fresh" {
		t.Fatalf("launches = %+v, want one fresh start", startReqs(l))
	}
}

func TestRollbackRestoresThePrevious(t *testing.T) {
	f := newFixture(t)
	src := f.insertSession(store.Session{ID: "src", ActivationOrder: 1})
	tgt := f.insertSession(store.Session{ID: "tgt", ActivationOrder: 2})
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != tgt.ID {
		t.Fatalf("current = %s, want %s", cur.ID, tgt.ID)
	}
	f.update(func(tx store.Tx) error { return workspace.Rollback(tx, tgt.ID, "rolled back", f.clk.Now()) })
	if cur, err := f.svc.Current(f.ctx, f.ws); err != nil || cur.ID != src.ID {
		t.Fatalf("current after rollback = %s, %v; want %s", cur.ID, err, src.ID)
	}
}

func TestExplicitStartReactivatesRolledBack(t *testing.T) {
	f := newFixture(t)
	a := f.insertSession(store.Session{ID: "a", ActivationOrder: 1})
	b := f.insertSession(store.Session{ID: "b", ActivationOrder: 2})
	f.update(func(tx store.Tx) error { return workspace.Rollback(tx, b.ID, "rolled back", f.clk.Now()) })
	got := f.start(session.TurnRequest{Session: b.ID, Prompt: "back to b"})
	if got.ID != b.ID || got.ActivationOrder != 3 {
		t.Fatalf("explicit start = %s order %d, want %s order 3", got.ID, got.ActivationOrder, b.ID)
	}
	orders, cur, _ := f.orders()
	if cur != b.ID || orders[a.ID] != 1 {
		t.Fatalf("current %s, orders %v; want b current and a still 1", cur, orders)
	}
	l := f.launches()
	if len(l) != 1 || l[0].Req.Mode != "resume" || l[0].Req.NativeID != "n-b" {
		t.Fatalf("launches = %+v, want a resume of n-b", startReqs(l))
	}
}

func TestRefreshAfterHandEdits(t *testing.T) {
	f := newFixture(t)
	f.insertSession(store.Session{ID: "a", ActivationOrder: 4})
	f.insertSession(store.Session{ID: "b", ActivationOrder: 9})
	f.update(func(tx store.Tx) error {
		s, err := tx.GetSession("b")
		if err != nil {
			return err
		}
		s.ActivationOrder = workspace.RolledBack
		if err := tx.PutSession(s); err != nil {
			return err
		}
		return workspace.Refresh(tx, f.ws, f.clk.Now())
	})
	_, cur, counter := f.orders()
	if cur != "a" || counter != 9 {
		t.Fatalf("after refresh: current %q counter %d; want a, 9 (the counter never goes down)", cur, counter)
	}
}

func TestOrdersStayUnique(t *testing.T) {
	f := newFixture(t)
	first := f.start(session.TurnRequest{Prompt: "one"})
	f.stop(first.ID)
	second := f.start(session.TurnRequest{Fresh: true, Prompt: "two"})
	f.stop(second.ID)
	f.start(session.TurnRequest{Session: first.ID, Prompt: "three"})
	orders, cur, counter := f.orders()
	seen := map[int64]baton.SessionID{}
	for id, o := range orders {
		if o < 0 {
			continue
		}
		if other, dup := seen[o]; dup {
			t.Fatalf("order %d held by %s and %s", o, id, other)
		}
		seen[o] = id
	}
	if cur != first.ID || orders[first.ID] != counter || counter != 3 {
		t.Fatalf("orders %v current %s counter %d; want %s current with the highest order 3", orders, cur, counter, first.ID)
	}
}
