package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

func TestScheduleWakeupValidation(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: "ws-2", Config: cfgA}); err != nil {
		t.Fatal(err)
	}
	foreign := f.insertSession(store.Session{ID: "foreign", Workspace: "ws-2"})
	due := f.clk.Now().Add(time.Hour)
	tests := []struct {
		name string
		w    store.Wakeup
		want error
	}{
		{"empty prompt", store.Wakeup{Workspace: f.ws, At: due}, baton.ErrInvalid},
		{"blank prompt", store.Wakeup{Workspace: f.ws, Prompt: "  ", At: due}, baton.ErrInvalid},
		{"prompt too long", store.Wakeup{Workspace: f.ws, Prompt: strings.Repeat("x", baton.MaxPromptBytes+1), At: due}, baton.ErrInvalid},
		{"zero time", store.Wakeup{Workspace: f.ws, Prompt: "check"}, baton.ErrInvalid},
		{"unknown workspace", store.Wakeup{Workspace: "nope", Prompt: "check", At: due}, session.ErrNoWorkspace},
		{"unknown pinned session", store.Wakeup{Workspace: f.ws, Session: "ghost", Prompt: "check", At: due}, session.ErrNoSession},
		{"pinned to another workspace's session", store.Wakeup{Workspace: f.ws, Session: foreign.ID, Prompt: "check", At: due}, session.ErrNoSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.ScheduleWakeup(f.ctx, tt.w)
			mustIs(t, err, tt.want)
		})
	}
	if ws, _ := session.List[store.Wakeup](f.ctx, f.svc, f.ws); len(ws) != 0 {
		t.Fatalf("rejected wakeups were stored: %+v", ws)
	}
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: "check", At: due})
	if err != nil || w.ID == "" || w.Status != store.WakeupPending {
		t.Fatalf("valid wakeup = %+v, %v", w, err)
	}
}

// wakeupStatus reads a wakeup's status.
func (f *fixture) wakeupStatus(id baton.WakeupID) store.WakeupStatus {
	f.t.Helper()
	var w store.Wakeup
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { w, err = tx.GetWakeup(id); return err }); err != nil {
		f.t.Fatal(err)
	}
	return w.Status
}

func TestFireDueResumesTheSession(t *testing.T) {
	f := newFixture(t)
	s := f.start(session.TurnRequest{Prompt: "work"})
	f.stop(s.ID)
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Session: s.ID, Prompt: "check CI", At: f.clk.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.fireDue(f.ctx, 0)
	if err != nil || len(res.Fired)+len(res.Deferred)+len(res.Refused) != 0 {
		t.Fatalf("FireDue before the deadline = %+v, %v; want nothing", res, err)
	}
	f.clk.Advance(time.Hour)
	res, err = f.fireDue(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fired{Fired: []baton.WakeupID{w.ID}}, res); d != "" {
		t.Fatalf("FireDue (-want +got):\n%s", d)
	}
	l := f.launches()
	want := launchSummary{s.ID, engine.Resume, "native-1", "check CI", cfgA}
	if len(l) != 2 || summaries(l)[1] != want {
		t.Fatalf("launches = %+v, want the second to be %+v", summaries(l), want)
	}
	if st := f.wakeupStatus(w.ID); st != store.WakeupFired {
		t.Fatalf("wakeup status %s, want fired", st)
	}
}

func TestFireDueDefersWhileReservedOrRunning(t *testing.T) {
	f := newFixture(t)
	s := f.start(session.TurnRequest{Prompt: "work"})
	w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: "check CI", At: f.clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	// Running: deferred.
	res, err := f.fireDue(f.ctx, 0)
	if err != nil || len(res.Deferred) != 1 || len(res.Fired)+len(res.Refused) != 0 {
		t.Fatalf("FireDue while running = %+v, %v", res, err)
	}
	f.stop(s.ID)
	// Reserved: deferred again, neither fired nor dropped.
	f.reserve("h1")
	for range 2 {
		res, err = f.fireDue(f.ctx, 0)
		if err != nil || len(res.Deferred) != 1 || len(res.Fired)+len(res.Refused) != 0 {
			t.Fatalf("FireDue while reserved = %+v, %v", res, err)
		}
		if st := f.wakeupStatus(w.ID); st != store.WakeupPending {
			t.Fatalf("deferred wakeup is %s, want pending", st)
		}
	}
	if n := len(f.launches()); n != 1 {
		t.Fatalf("launches = %d, want only the first start", n)
	}
	f.release("h1")
	res, err = f.fireDue(f.ctx, 0)
	if err != nil || len(res.Fired) != 1 {
		t.Fatalf("FireDue after release = %+v, %v", res, err)
	}
	if l := f.launches(); len(l) != 2 || l[1].Req.Mode != engine.Resume || l[1].Req.Prompt != "check CI" {
		t.Fatalf("launches = %+v", summaries(l))
	}
}

func TestFireDueRefusesWhenNothingToResume(t *testing.T) {
	tests := []struct {
		name    string
		history []store.Session
		wsCfg   baton.EngineConfig
	}{
		{"no session", nil, cfgA},
		{"no native id", []store.Session{{ID: "a", ActivationOrder: 1, NativeID: noNativeID}}, cfgA},
		{"another account", []store.Session{{ID: "a", ActivationOrder: 1}}, cfgAlt},
		{"another engine", []store.Session{{ID: "a", ActivationOrder: 1}}, cfgOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for _, s := range tt.history {
				f.insertSession(s)
			}
			f.setConfig(tt.wsCfg)
			w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: "check", At: f.clk.Now()})
			if err != nil {
				t.Fatal(err)
			}
			res, err := f.fireDue(f.ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(fired{Refused: []baton.WakeupID{w.ID}}, res); d != "" {
				t.Fatalf("FireDue (-want +got):\n%s", d)
			}
			if st := f.wakeupStatus(w.ID); st != store.WakeupCancelled {
				t.Fatalf("refused wakeup is %s, want cancelled", st)
			}
			if n := len(f.launches()); n != 0 {
				t.Fatalf("a refused wakeup launched %d times", n)
			}
		})
	}
}

func TestFireDueLimit(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"one", "two"} {
		if _, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Prompt: p, At: f.clk.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := f.fireDue(f.ctx, 1)
	if err != nil || len(res.Refused) != 1 {
		t.Fatalf("FireDue(limit 1) = %+v, %v; want one handled", res, err)
	}
}

func TestRebindWakeupsMovesOnlyPendingPinnedToSource(t *testing.T) {
	f := newFixture(t)
	src := f.insertSession(store.Session{ID: "src", ActivationOrder: 1})
	other := f.insertSession(store.Session{ID: "other", ActivationOrder: 2})
	tgt := f.insertSession(store.Session{ID: "tgt", ActivationOrder: 3})
	due := f.clk.Now().Add(time.Hour)
	schedule := func(pin baton.SessionID, prompt string) baton.WakeupID {
		t.Helper()
		w, err := f.svc.ScheduleWakeup(f.ctx, store.Wakeup{Workspace: f.ws, Session: pin, Prompt: prompt, At: due})
		if err != nil {
			t.Fatal(err)
		}
		return w.ID
	}
	pinned := schedule(src.ID, "pinned")
	fired := schedule(src.ID, "fired")
	onOther := schedule(other.ID, "other")
	unpinned := schedule("", "unpinned")
	f.update(func(tx store.Tx) error {
		w, err := tx.GetWakeup(fired)
		if err != nil {
			return err
		}
		w.Status = store.WakeupFired
		return tx.PutWakeup(w)
	})
	var n int
	f.update(func(tx store.Tx) (err error) {
		n, err = workspace.RebindWakeups(tx, f.ws, src.ID, tgt.ID, f.clk.Now())
		return err
	})
	if n != 1 {
		t.Fatalf("moved %d, want 1", n)
	}
	all, err := session.List[store.Wakeup](f.ctx, f.svc, f.ws)
	if err != nil {
		t.Fatal(err)
	}
	type pin struct {
		Session baton.SessionID
		Prompt  string
		At      time.Time
	}
	got := map[baton.WakeupID]pin{}
	for _, w := range all {
		got[w.ID] = pin{w.Session, w.Prompt, w.At}
	}
	want := map[baton.WakeupID]pin{
		pinned:   {tgt.ID, "pinned", due},
		fired:    {src.ID, "fired", due},
		onOther:  {other.ID, "other", due},
		unpinned: {"", "unpinned", due},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("wakeups (-want +got):\n%s", d)
	}
	for _, noop := range [][2]baton.SessionID{{"", tgt.ID}, {tgt.ID, tgt.ID}} {
		f.update(func(tx store.Tx) (err error) {
			n, err = workspace.RebindWakeups(tx, f.ws, noop[0], noop[1], f.clk.Now())
			return err
		})
		if n != 0 {
			t.Fatalf("RebindWakeups(%q, %q) moved %d", noop[0], noop[1], n)
		}
	}
}
