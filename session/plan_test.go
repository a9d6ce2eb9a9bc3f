package session_test

import (
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

func TestPlanContinue(t *testing.T) {
	noNative := row("dead", 9, ended, 8, 9)
	noNative.NativeID = ""
	alt := row("alt", 5, ended, 4, 5)
	alt.Config = cfgAlt
	other := row("other", 6, ended, 4, 5)
	other.Config = cfgOther
	model2 := row("m2", 4, ended, 1, 2)
	model2.Config = cfgA2
	tests := []struct {
		name      string
		sessions  []store.Session
		target    baton.EngineConfig
		automated bool
		want      session.PlanAction
		resume    baton.SessionID
	}{
		{"nothing recorded", nil, cfgA, false, session.PlanFresh, ""},
		{"nothing recorded, automated", nil, cfgA, true, session.PlanRefuse, ""},
		{"killed before a native id", []store.Session{noNative}, cfgA, false, session.PlanFresh, ""},
		{"killed before a native id, automated", []store.Session{noNative}, cfgA, true, session.PlanRefuse, ""},
		{"same engine and account", []store.Session{row("a", 1, ended, 1, 2)}, cfgA, false, session.PlanResume, "a"},
		{"same engine and account, automated", []store.Session{row("a", 1, ended, 1, 2)}, cfgA, true, session.PlanResume, "a"},
		{"another model of the same account resumes", []store.Session{model2}, cfgA, false, session.PlanResume, "m2"},
		{"the last one with a native id", []store.Session{row("a", 1, ended, 1, 2), noNative}, cfgA, false, session.PlanResume, "a"},
		{"the highest order among resumable", []store.Session{row("a", 1, ended, 1, 2), row("b", 3, ended, 1, 2)}, cfgA, false, session.PlanResume, "b"},
		{"running first", []store.Session{row("a", 1, running, 1, never), row("b", 3, ended, 1, 2)}, cfgA, false, session.PlanResume, "a"},
		{"an id another account minted: fresh", []store.Session{alt}, cfgA, false, session.PlanFresh, ""},
		{"an id another account minted, automated", []store.Session{alt}, cfgA, true, session.PlanRefuse, ""},
		{"an id another engine minted: fresh", []store.Session{other}, cfgA, false, session.PlanFresh, ""},
		{"switching to the account that minted it", []store.Session{row("a", 1, ended, 1, 2), alt}, cfgAlt, false, session.PlanResume, "alt"},
		{"account spelled with spaces", []store.Session{alt}, baton.EngineConfig{Engine: " demo ", Account: " work "}, false, session.PlanResume, "alt"},
		{"rolled back only: fresh", []store.Session{row("a", workspace.RolledBack, ended, 1, 2)}, cfgA, false, session.PlanFresh, ""},
		{"rolled back only, automated", []store.Session{row("a", workspace.RolledBack, ended, 1, 2)}, cfgA, true, session.PlanRefuse, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := session.PlanContinue(tt.sessions, tt.target, tt.automated)
			if p.Action != tt.want || p.Session.ID != tt.resume {
				t.Fatalf("PlanContinue = %s %q, want %s %q (reason %q)", p.Action, p.Session.ID, tt.want, tt.resume, p.Reason)
			}
			if p.Reason == "" {
				t.Fatal("no reason given")
			}
			if tt.want == session.PlanResume && p.Session.NativeID == "" {
				t.Fatalf("resume of a session without a native id: %+v", p.Session)
			}
			if tt.want == session.PlanRefuse && !strings.HasPrefix(p.Reason, session.ErrResumeOnly.Error()) {
				t.Fatalf("refusal reason %q does not say it may only resume", p.Reason)
			}
		})
	}
}

// One rule: "nothing recorded" and "an id this engine or account cannot
// resolve" give the same plan, reason included.
func TestPlanContinueOneRule(t *testing.T) {
	alt := row("alt", 5, ended, 4, 5)
	alt.Config = cfgAlt
	for _, automated := range []bool{false, true} {
		none := session.PlanContinue(nil, cfgA, automated)
		stranded := session.PlanContinue([]store.Session{alt}, cfgA, automated)
		if none != stranded {
			t.Fatalf("automated=%v: nothing recorded %+v, stranded id %+v", automated, none, stranded)
		}
	}
	p := session.PlanContinue(nil, baton.EngineConfig{Engine: "demo", Account: "work"}, true)
	if !strings.Contains(p.Reason, `engine "demo" with account "work"`) {
		t.Fatalf("reason %q does not name the engine and account", p.Reason)
	}
}

func TestPlanActionString(t *testing.T) {
	for a, want := range map[session.PlanAction]string{
		session.PlanResume: "resume", session.PlanFresh: "fresh", session.PlanRefuse: "refuse", 0: "PlanAction(0)",
	} {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(a), got, want)
		}
	}
}
