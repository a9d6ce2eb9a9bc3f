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
		want      string
		resume    baton.SessionID
	}{
		{"nothing recorded", nil, cfgA, false, "fresh", ""},
		{"nothing recorded, automated", nil, cfgA, true, "refuse", ""},
		{"killed before a native id", []store.Session{noNative}, cfgA, false, "fresh", ""},
		{"killed before a native id, automated", []store.Session{noNative}, cfgA, true, "refuse", ""},
		{"same engine and account", []store.Session{row("a", 1, ended, 1, 2)}, cfgA, false, "resume", "a"},
		{"same engine and account, automated", []store.Session{row("a", 1, ended, 1, 2)}, cfgA, true, "resume", "a"},
		{"another model of the same account resumes", []store.Session{model2}, cfgA, false, "resume", "m2"},
		{"the last one with a native id", []store.Session{row("a", 1, ended, 1, 2), noNative}, cfgA, false, "resume", "a"},
		{"the highest order among resumable", []store.Session{row("a", 1, ended, 1, 2), row("b", 3, ended, 1, 2)}, cfgA, false, "resume", "b"},
		{"running first", []store.Session{row("a", 1, running, 1, never), row("b", 3, ended, 1, 2)}, cfgA, false, "resume", "a"},
		{"an id another account minted: fresh", []store.Session{alt}, cfgA, false, "fresh", ""},
		{"an id another account minted, automated", []store.Session{alt}, cfgA, true, "refuse", ""},
		{"an id another engine minted: fresh", []store.Session{other}, cfgA, false, "fresh", ""},
		{"switching to the account that minted it", []store.Session{row("a", 1, ended, 1, 2), alt}, cfgAlt, false, "resume", "alt"},
		{"account spelled with spaces", []store.Session{alt}, baton.EngineConfig{Engine: " demo ", Account: " work "}, false, "resume", "alt"},
		{"rolled back only: fresh", []store.Session{row("a", workspace.RolledBack, ended, 1, 2)}, cfgA, false, "fresh", ""},
		{"rolled back only, automated", []store.Session{row("a", workspace.RolledBack, ended, 1, 2)}, cfgA, true, "refuse", ""},
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
			if tt.want == "resume" && p.Session.NativeID == "" {
				t.Fatalf("resume of a session without a native id: %+v", p.Session)
			}
			if tt.want == "refuse" && !strings.HasPrefix(p.Reason, session.ErrResumeOnly.Error()) {
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

// The reasons a plan gives, word for word.
func TestPlanContinueReasons(t *testing.T) {
	claude := baton.EngineConfig{Engine: "claude", Account: "personal"}
	work := baton.EngineConfig{Engine: "claude", Account: "work"}
	history := []store.Session{
		{ID: "s1", Config: claude, NativeID: "0b6c-41", ActivationOrder: 1, Status: store.SessionEnded},
		{ID: "s2", Config: claude, ActivationOrder: 2, Status: store.SessionEnded}, // killed before a native id
	}
	for _, c := range []struct {
		target    baton.EngineConfig
		automated bool
		want      string
	}{
		{claude, false, `personal resume: resume session s1 (native id 0b6c-41) on engine "claude" with account "personal"`},
		{work, false, `work fresh: no session with a native id on engine "claude" with account "work": a fresh session briefed from the record`},
		{work, true, `work refuse: automated trigger may only resume, and there is nothing to resume: no session with a native id on engine "claude" with account "work"; only a user's message may start a fresh briefed session`},
	} {
		p := session.PlanContinue(history, c.target, c.automated)
		if got := c.target.Account + " " + p.Action + ": " + p.Reason; got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
