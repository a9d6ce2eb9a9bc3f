package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// launchSummary is what a test compares of an engine request.
type launchSummary struct {
	Session  baton.SessionID
	Mode     engine.Mode
	NativeID string
	Prompt   string
	Config   baton.EngineConfig
}

func summaries(ls []enginetest.Launch) []launchSummary {
	out := make([]launchSummary, len(ls))
	for i, l := range ls {
		out[i] = launchSummary{l.Req.Session, l.Req.Mode, l.Req.NativeID, l.Req.Prompt, l.Req.Config}
	}
	return out
}

func TestStartFreshThenImplicitResume(t *testing.T) {
	f := newFixture(t)
	first := f.start(session.TurnRequest{Prompt: "hello"})
	if first.NativeID != "native-1" || first.Status != store.SessionRunning || first.ActivationOrder != 1 || first.Config != cfgA {
		t.Fatalf("first session = %+v", first)
	}
	if cur, err := f.svc.Current(f.ctx, f.ws); err != nil || cur.ID != first.ID {
		t.Fatalf("current = %s, %v; want %s", cur.ID, err, first.ID)
	}
	f.stop(first.ID)
	again := f.start(session.TurnRequest{Prompt: "and now?"})
	if again.ID != first.ID {
		t.Fatalf("implicit resume started %s, want %s", again.ID, first.ID)
	}
	want := []launchSummary{
		{first.ID, engine.Fresh, "", "hello", cfgA},
		{first.ID, engine.Resume, "native-1", "and now?", cfgA},
	}
	if d := cmp.Diff(want, summaries(f.launches())); d != "" {
		t.Fatalf("launches (-want +got):\n%s", d)
	}
}

func TestStartImplicitResumeNeedsSameAccountAndNativeID(t *testing.T) {
	tests := []struct {
		name    string
		history store.Session
		wsCfg   baton.EngineConfig
		want    engine.Mode
	}{
		{"same engine and account", store.Session{ID: "a", ActivationOrder: 1}, cfgA, engine.Resume},
		{"another model, same account", store.Session{ID: "a", ActivationOrder: 1}, cfgA2, engine.Resume},
		{"another account", store.Session{ID: "a", ActivationOrder: 1}, cfgAlt, engine.Fresh},
		{"another engine", store.Session{ID: "a", ActivationOrder: 1}, cfgOther, engine.Fresh},
		{"no native id", store.Session{ID: "a", ActivationOrder: 1, NativeID: noNativeID}, cfgA, engine.Fresh},
		{"rolled back", store.Session{ID: "a", ActivationOrder: workspace.RolledBack}, cfgA, engine.Fresh},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.insertSession(tt.history)
			f.setConfig(tt.wsCfg)
			got := f.start(session.TurnRequest{Prompt: "go"})
			l := f.launches()
			if len(l) != 1 || l[0].Req.Mode != tt.want {
				t.Fatalf("launches = %+v, want one %s", summaries(l), tt.want)
			}
			if (got.ID == tt.history.ID) != (tt.want == engine.Resume) {
				t.Fatalf("started %s (mode %s)", got.ID, tt.want)
			}
			if tt.want == engine.Resume && (l[0].Req.NativeID != "n-a" || l[0].Req.Prompt != "go") {
				t.Fatalf("resume request = %+v", summaries(l))
			}
		})
	}
}

func TestStartExplicitAndForcedFresh(t *testing.T) {
	f := newFixture(t)
	old := f.insertSession(store.Session{ID: "old", ActivationOrder: 1})
	f.insertSession(store.Session{ID: "new", ActivationOrder: 2})
	got := f.start(session.TurnRequest{Session: old.ID, Prompt: "explicit"})
	if got.ID != old.ID || got.ActivationOrder != 3 {
		t.Fatalf("explicit = %+v", got)
	}
	f.stop(got.ID)
	fresh := f.start(session.TurnRequest{Fresh: true, Prompt: "forced"})
	if fresh.ID == old.ID || fresh.ID == "new" {
		t.Fatalf("Fresh reused %s", fresh.ID)
	}
	want := []launchSummary{
		{old.ID, engine.Resume, "n-old", "explicit", cfgA},
		{fresh.ID, engine.Fresh, "", "forced", cfgA},
	}
	if d := cmp.Diff(want, summaries(f.launches())); d != "" {
		t.Fatalf("launches (-want +got):\n%s", d)
	}
}

func TestStartRefusedWhileReserved(t *testing.T) {
	f := newFixture(t)
	f.reserve("h1")
	_, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hi"})
	mustIs(t, err, session.ErrWorkspaceBusy)
	if n := len(f.launches()); n != 0 {
		t.Fatalf("launches = %d, want 0", n)
	}
	if all, _ := session.List[store.Session](f.ctx, f.svc, f.ws); len(all) != 0 {
		t.Fatalf("a refused start wrote sessions: %+v", all)
	}
	// Once released, it may start.
	f.release("h1")
	if s := f.start(session.TurnRequest{Prompt: "released"}); s.NativeID == "" || len(f.launches()) != 1 {
		t.Fatalf("start once released = %+v, launches %+v", s, summaries(f.launches()))
	}
}

func TestStartRefusedWhileAnotherRuns(t *testing.T) {
	f := newFixture(t)
	f.start(session.TurnRequest{Prompt: "one"})
	for _, req := range []session.TurnRequest{
		{Workspace: f.ws, Prompt: "two"},
		{Workspace: f.ws, Prompt: "two", Fresh: true},
	} {
		_, err := f.svc.Start(f.ctx, req)
		mustIs(t, err, session.ErrSessionRunning)
	}
	if n := len(f.launches()); n != 1 {
		t.Fatalf("launches = %d, want 1", n)
	}
	if m := f.eng.MaxRunning(f.ws); m != 1 {
		t.Fatalf("max running = %d", m)
	}
}

func TestStartEngineErrorRecordedAsEnded(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{StartErr: engine.ErrAuth})
	_, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hi"})
	mustIs(t, err, engine.ErrAuth)
	all, err := session.List[store.Session](f.ctx, f.svc, f.ws)
	if err != nil || len(all) != 1 {
		t.Fatalf("sessions = %+v, %v", all, err)
	}
	s := all[0]
	if s.Status != store.SessionEnded || s.NativeID != "" || !strings.HasPrefix(s.EndReason, "start failed: ") || !strings.Contains(s.EndReason, engine.ErrAuth.Error()) {
		t.Fatalf("row = %+v, want ended with the engine's reason", s)
	}
}

func TestStartNotReadyRecordedAsEnded(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Ready: enginetest.ExitBeforeReady, ExitCode: 137})
	_, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: "hi"})
	mustIs(t, err, engine.ErrExitedBeforeReady)
	all, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	if len(all) != 1 {
		t.Fatalf("sessions = %+v", all)
	}
	s := f.waitSession(all[0].ID, func(s store.Session) bool { return s.Status == store.SessionEnded })
	if s.NativeID != "" || s.EndReason == "" {
		t.Fatalf("row = %+v, want ended without a native id and with a reason", s)
	}
}

func TestStartRejectsBadInput(t *testing.T) {
	f := newFixture(t)
	other := "ws-2"
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: baton.WorkspaceID(other), Config: cfgA}); err != nil {
		t.Fatal(err)
	}
	foreign := f.insertSession(store.Session{ID: "foreign", Workspace: baton.WorkspaceID(other)})
	f.update(func(tx store.Tx) error {
		w, err := tx.GetWorkspace(baton.WorkspaceID(other))
		if err != nil {
			return err
		}
		w.Archived = true
		return tx.PutWorkspace(w)
	})
	tests := []struct {
		name string
		ctx  context.Context
		req  session.TurnRequest
		want error
	}{
		{"nil context", nil, session.TurnRequest{Workspace: f.ws, Prompt: "x"}, baton.ErrInvalid},
		{"empty prompt", f.ctx, session.TurnRequest{Workspace: f.ws}, baton.ErrInvalid},
		{"blank prompt", f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: " \n\t"}, baton.ErrInvalid},
		{"prompt too long", f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: strings.Repeat("x", baton.MaxPromptBytes+1)}, baton.ErrInvalid},
		{"unknown workspace", f.ctx, session.TurnRequest{Workspace: "nope", Prompt: "x"}, session.ErrNoWorkspace},
		{"archived workspace", f.ctx, session.TurnRequest{Workspace: baton.WorkspaceID(other), Prompt: "x"}, session.ErrArchived},
		{"unknown session", f.ctx, session.TurnRequest{Workspace: f.ws, Session: "ghost", Prompt: "x"}, session.ErrNoSession},
		{"session of another workspace", f.ctx, session.TurnRequest{Workspace: f.ws, Session: foreign.ID, Prompt: "x"}, session.ErrNoSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Start(tt.ctx, tt.req)
			mustIs(t, err, tt.want)
		})
	}
	if n := len(f.launches()); n != 0 {
		t.Fatalf("bad input reached the engine %d times", n)
	}
	if all, _ := session.List[store.Session](f.ctx, f.svc, f.ws); len(all) != 0 {
		t.Fatalf("bad input wrote sessions: %+v", all)
	}
}
