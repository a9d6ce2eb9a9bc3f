package session_test

import (
	"context"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

const (
	theTask   = "Fix the flaky test in pkg/queue"
	theEnding = "the process was killed while waiting for its worktree"
)

// pastTalk is a previous conversation that counts how often it is ranged.
type pastTalk struct {
	events []transcript.Event
	ranged atomic.Int32
}

func (tr *pastTalk) seq() iter.Seq[transcript.Event] {
	return func(yield func(transcript.Event) bool) {
		tr.ranged.Add(1)
		for _, ev := range tr.events {
			if !yield(ev) {
				return
			}
		}
	}
}

func user(text string) transcript.Event {
	return transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: text}
}
func agent(text string) transcript.Event {
	return transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: text}
}

// history is the conversation the tests replay: the task, an answer, a
// tool call, and the continuation's own message appended already.
func history(prompt string) *pastTalk {
	return &pastTalk{events: []transcript.Event{
		user(theTask), agent("I will look at the retry loop."),
		{Kind: transcript.ToolCall, Text: "go test ./pkg/queue"}, agent("It fails one run in ten."),
		user(prompt),
	}}
}

// continueOK runs Continue and fails the test on error.
func (f *fixture) continueOK(req store.Continuation, b ...session.Briefing) session.ContinueResult {
	f.t.Helper()
	if req.Workspace == "" {
		req.Workspace = f.ws
	}
	res, err := f.svc.Continue(f.ctx, req, append(b, session.Briefing{})[0])
	if err != nil {
		f.t.Fatalf("Continue: %v (%s)", err, res.Reason)
	}
	return res
}

// resumable leaves the workspace with an ended session holding native-1.
func (f *fixture) resumable() store.Session {
	f.t.Helper()
	s := f.start(session.TurnRequest{Prompt: "first"})
	f.stop(s.ID)
	return f.session(s.ID)
}

func TestContinueResumesByteForByte(t *testing.T) {
	f := newFixture(t)
	s := f.resumable()
	prompt := "  keep going:\n\tfix the *second* test too  \n"
	tr := history(prompt)
	res := f.continueOK(store.Continuation{Prompt: prompt, Task: theTask, Ending: theEnding}, session.Briefing{Events: always(tr.seq())})
	l := f.launches()
	want := launchSummary{s.ID, engine.Resume, "native-1", prompt, cfgA}
	if len(l) != 2 || summaries(l)[1] != want {
		t.Fatalf("launches = %+v, want the second to be %+v", summaries(l), want)
	}
	if !strings.HasPrefix(res.Reason, "resume session ") || res.Briefed || res.Briefing != "" || res.Prompt != prompt || res.Retried || res.Session.ID != s.ID {
		t.Fatalf("result = %+v", res)
	}
	if n := tr.ranged.Load(); n != 0 {
		t.Fatalf("a resume read the transcript %d times", n)
	}
}

func TestContinueFreshIsBriefed(t *testing.T) {
	f := newFixture(t)
	f.insertSession(store.Session{ID: "killed", ActivationOrder: 1, NativeID: noNativeID})
	prompt := "Please carry on."
	tr := history(prompt)
	res := f.continueOK(store.Continuation{Prompt: prompt, Task: theTask, Ending: theEnding}, session.Briefing{Events: always(tr.seq())})
	l := f.launches()
	if len(l) != 1 || l[0].Req.Mode != engine.Fresh || l[0].Req.Session == "killed" {
		t.Fatalf("launches = %+v, want one fresh start of a new session", summaries(l))
	}
	got := l[0].Req.Prompt
	if !res.Briefed || got != res.Prompt {
		t.Fatalf("result = %+v", res)
	}
	if !strings.HasPrefix(got, res.Briefing) || !strings.HasSuffix(got, "\n\n"+prompt) {
		t.Fatalf("opening prompt is not briefing + message:\n%s", got)
	}
	for _, want := range []string{"NEW session", "## How the previous session ended", theEnding, "I will look at the retry loop.", "It fails one run in ten.", "## New message"} {
		if !strings.Contains(got, want) {
			t.Errorf("opening prompt lacks %q", want)
		}
	}
	for s, n := range map[string]int{theTask: 1, prompt: 1, "go test ./pkg/queue": 0} {
		if c := strings.Count(got, s); c != n {
			t.Errorf("%q appears %d times, want %d:\n%s", s, c, n, got)
		}
	}
	if n := tr.ranged.Load(); n != 1 {
		t.Fatalf("transcript ranged %d times, want once", n)
	}
	cur, err := f.svc.Current(f.ctx, f.ws)
	if err != nil || cur.ID != res.Session.ID || cur.NativeID == "" {
		t.Fatalf("current = %+v, %v; want the fresh session", cur, err)
	}
}

func TestContinueTaskAppearsOnce(t *testing.T) {
	long := strings.Repeat("word ", 3000) // clipped in the briefing
	tests := []struct {
		name, task string
		standIn    bool
	}{
		{"the message is the task", theTask + "\n", true},
		{"a multi-line task", "Fix it.\n\nThen run the tests.", true},
		{"a task the briefing clips", long, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			res := f.continueOK(store.Continuation{Prompt: tt.task, Task: tt.task})
			got := f.launches()[0].Req.Prompt
			hasStandIn := strings.HasSuffix(got, "Carry on with the original task, quoted above.")
			if hasStandIn != tt.standIn || !strings.HasPrefix(got, res.Briefing) {
				t.Fatalf("stand-in = %v, want %v:\n%s", hasStandIn, tt.standIn, got)
			}
			if tt.standIn && strings.Count(got, strings.Split(strings.TrimSpace(tt.task), "\n")[0]) != 1 {
				t.Fatalf("the task appears more than once:\n%s", got)
			}
			if !tt.standIn && !strings.HasSuffix(got, tt.task) {
				t.Fatal("the message was not delivered whole")
			}
		})
	}
}

func TestContinueOnAnotherAccountStartsFreshAndSwitches(t *testing.T) {
	f := newFixture(t)
	old := f.resumable()
	res := f.continueOK(store.Continuation{Prompt: "go on", Task: theTask, Target: cfgAlt})
	l := f.launches()
	if len(l) != 2 || l[1].Req.Mode != engine.Fresh || l[1].Req.Config != cfgAlt || res.Session.ID == old.ID {
		t.Fatalf("launches = %+v", summaries(l))
	}
	if ws, _ := f.svc.Workspace(f.ctx, f.ws); ws.Config != cfgAlt {
		t.Fatalf("workspace config = %+v, want the target", ws.Config)
	}
	// The next ordinary message resumes the continuation's session.
	f.stop(res.Session.ID)
	next := f.start(session.TurnRequest{Prompt: "and then?"})
	if l := f.launches(); next.ID != res.Session.ID || l[2].Req.Mode != engine.Resume || l[2].Req.NativeID != res.Session.NativeID {
		t.Fatalf("next start = %+v", summaries(l))
	}
}

func TestContinueResumeTakesTheTargetModel(t *testing.T) {
	f := newFixture(t)
	s := f.resumable()
	f.continueOK(store.Continuation{Prompt: "go on", Target: cfgA2})
	want := launchSummary{s.ID, engine.Resume, "native-1", "go on", cfgA2}
	if got := summaries(f.launches())[1]; got != want {
		t.Fatalf("launch = %+v, want %+v", got, want)
	}
	if got := f.session(s.ID).Config; got != cfgA2 {
		t.Fatalf("session config = %+v", got)
	}
}

func TestContinueRetriesFreshWhenSessionMissing(t *testing.T) {
	f := newFixture(t)
	old := f.resumable()
	f.eng.Push(enginetest.Script{StartErr: baton.Errorf(engine.ErrSessionMissing, "No conversation found with session ID native-1")})
	prompt := "continue please"
	res := f.continueOK(store.Continuation{Prompt: prompt, Task: theTask, Ending: theEnding}, session.Briefing{Events: always(history(prompt).seq())})
	l := f.launches()
	if len(l) != 3 {
		t.Fatalf("launches = %+v, want 3 (first run, failed resume, fresh retry)", summaries(l))
	}
	if l[1].Req.Mode != engine.Resume || l[1].Req.Prompt != prompt || !l[1].Failed {
		t.Fatalf("resume attempt = %+v", summaries(l)[1])
	}
	retry := l[2].Req
	if retry.Mode != engine.Fresh || retry.Session == old.ID || retry.Prompt != res.Prompt {
		t.Fatalf("retry = %+v", summaries(l)[2])
	}
	if !strings.Contains(retry.Prompt, res.Briefing) || res.Briefing == "" || strings.Count(retry.Prompt, prompt) != 1 || strings.Count(retry.Prompt, theTask) != 1 {
		t.Fatalf("retry prompt does not hold the briefing and the message once:\n%s", retry.Prompt)
	}
	if !res.Retried || res.Missing != old.ID || !res.Briefed {
		t.Fatalf("result = %+v", res)
	}
	if got := f.session(old.ID); got.ActivationOrder != workspace.RolledBack || got.Status != store.SessionEnded || got.NativeID != "native-1" {
		t.Fatalf("missing session row = %+v, want rolled back and ended, native id kept", got)
	}
	if cur, _ := f.svc.Current(f.ctx, f.ws); cur.ID != res.Session.ID {
		t.Fatalf("current = %s, want the fresh session %s", cur.ID, res.Session.ID)
	}
}

func TestContinueDoesNotRetry(t *testing.T) {
	missing := baton.Errorf(engine.ErrSessionMissing, "No conversation found")
	tests := []struct {
		name        string
		script      enginetest.Script
		automated   bool
		cancel      bool // the caller cancels while the resume starts
		want        error
		rolledBack  bool
		wantRefusal bool
	}{
		{name: "authentication failure", script: enginetest.Script{StartErr: engine.ErrAuth}, want: engine.ErrAuth},
		{name: "readiness rejected", script: enginetest.Script{Ready: enginetest.ReadyReject}, want: engine.ErrReadyRejected},
		{name: "automated trigger", script: enginetest.Script{StartErr: missing}, automated: true, want: engine.ErrSessionMissing, rolledBack: true},
		{name: "after a cancel", script: enginetest.Script{StartErr: missing}, cancel: true, want: engine.ErrSessionMissing, rolledBack: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := newFixture(t, func(o *enginetest.Options) {
				o.ScriptFor = func(req engine.StartRequest) (enginetest.Script, bool) {
					if req.Mode != engine.Resume {
						return enginetest.Script{}, false
					}
					if tt.cancel {
						cancel()
					}
					return tt.script, true
				}
			})
			old := f.resumable()
			res, err := f.svc.Continue(ctx, store.Continuation{Workspace: f.ws, Prompt: "go", Automated: tt.automated}, session.Briefing{})
			mustIs(t, err, tt.want)
			if n := len(f.launches()); n != 2 {
				t.Fatalf("launches = %+v, want 2 (first run, the resume): no retry", summaries(f.launches()))
			}
			if res.Retried || res.Briefed {
				t.Fatalf("result = %+v", res)
			}
			got := f.session(old.ID).ActivationOrder
			if tt.rolledBack != (got == workspace.RolledBack) || tt.rolledBack != (res.Missing == old.ID) {
				t.Fatalf("order %d, Missing %q; rolled back wanted: %v", got, res.Missing, tt.rolledBack)
			}
		})
	}
}

func TestContinueAutomatedMayOnlyResume(t *testing.T) {
	f := newFixture(t)
	f.insertSession(store.Session{ID: "killed", ActivationOrder: 1, NativeID: noNativeID})
	before, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	tr := history("wake up")
	res, err := f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Prompt: "wake up", Task: theTask, Automated: true, Target: cfgAlt}, session.Briefing{Events: always(tr.seq())})
	mustIs(t, err, session.ErrResumeOnly)
	if res.Reason != err.Error() {
		t.Fatalf("reason = %q, error %q", res.Reason, err)
	}
	after, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	if d := cmp.Diff(before, after); d != "" || len(f.launches()) != 0 || tr.ranged.Load() != 0 {
		t.Fatalf("a refusal had effects: launches %d, sessions (-before +after):\n%s", len(f.launches()), d)
	}
	if ws, _ := f.svc.Workspace(f.ctx, f.ws); ws.Config != cfgA {
		t.Fatalf("a refusal switched the workspace to %+v", ws.Config)
	}
	// With something to resume, an automated trigger resumes.
	f.insertSession(store.Session{ID: "live", ActivationOrder: 2})
	r := f.continueOK(store.Continuation{Prompt: "wake up", Automated: true})
	if l := f.launches(); len(l) != 1 || l[0].Req.Mode != engine.Resume || l[0].Req.NativeID != "n-live" || r.Briefed {
		t.Fatalf("automated resume = %+v", summaries(l))
	}
}

func TestContinueRejects(t *testing.T) {
	f := newFixture(t, func(o *enginetest.Options) {
		o.Validate = func(cfg baton.EngineConfig) error {
			if cfg.Model == "unknown" {
				return engine.ErrUnsupportedConfig
			}
			return nil
		}
	})
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: "archived", Config: cfgA}); err != nil {
		t.Fatal(err)
	}
	f.update(func(tx store.Tx) error {
		w, _ := tx.GetWorkspace("archived")
		w.Archived = true
		return tx.PutWorkspace(w)
	})
	big := strings.Repeat("x", baton.MaxPromptBytes+1)
	tests := []struct {
		name string
		ctx  context.Context
		req  store.Continuation
		want error
	}{
		{"nil context", nil, store.Continuation{Workspace: f.ws, Prompt: "x"}, baton.ErrInvalid},
		{"blank prompt", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "\n "}, baton.ErrInvalid},
		{"prompt too long", f.ctx, store.Continuation{Workspace: f.ws, Prompt: big}, baton.ErrInvalid},
		{"task too long", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x", Task: big}, baton.ErrInvalid},
		{"ending too long", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x", Ending: big}, baton.ErrInvalid},
		{"target without engine", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x", Target: baton.EngineConfig{Model: "m"}}, baton.ErrInvalid},
		{"target the engine refuses", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x", Target: baton.EngineConfig{Engine: "demo", Model: "unknown"}}, baton.ErrInvalid},
		{"unknown workspace", f.ctx, store.Continuation{Workspace: "nope", Prompt: "x"}, session.ErrNoWorkspace},
		{"archived workspace", f.ctx, store.Continuation{Workspace: "archived", Prompt: "x"}, session.ErrArchived},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Continue(tt.ctx, tt.req, session.Briefing{})
			mustIs(t, err, tt.want)
		})
	}
	f.reserve("h1")
	_, err := f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x"}, session.Briefing{})
	mustIs(t, err, session.ErrWorkspaceBusy)
	f.release("h1")
	s := f.start(session.TurnRequest{Prompt: "running"})
	_, err = f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x"}, session.Briefing{})
	mustIs(t, err, session.ErrSessionRunning)
	if got := f.session(s.ID); got.Status != store.SessionRunning {
		t.Fatalf("a refused continuation touched the running session: %+v", got)
	}
	if n := len(f.launches()); n != 1 {
		t.Fatalf("refused continuations reached the engine: %d launches", n)
	}
	all, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	if len(all) != 1 {
		t.Fatalf("refused continuations wrote sessions: %+v", all)
	}
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x"}, session.Briefing{})
	mustIs(t, err, session.ErrClosed)
}

func TestContinueEventsMayBeNil(t *testing.T) {
	f := newFixture(t)
	res := f.continueOK(store.Continuation{Prompt: "start over"})
	if !res.Briefed || !strings.Contains(res.Briefing, "The conversation was not included") || strings.Contains(res.Briefing, "Nothing was exchanged") || !strings.Contains(res.Briefing, "No task was recorded") {
		t.Fatalf("briefing without a record:\n%s", res.Briefing)
	}
	if slices.Contains([]string{"", res.Briefing}, res.Prompt) {
		t.Fatal("the prompt was not delivered")
	}
}

func TestContinuePromptTooLongForABriefing(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("y", baton.MaxPromptBytes)
	_, err := f.svc.Continue(f.ctx, store.Continuation{Workspace: f.ws, Prompt: big, Target: cfgAlt}, session.Briefing{})
	mustIs(t, err, baton.ErrInvalid)
	if ws, _ := f.svc.Workspace(f.ctx, f.ws); ws.Config != cfgA || len(f.launches()) != 0 {
		t.Fatalf("a rejected continuation had effects: config %+v, %d launches", ws.Config, len(f.launches()))
	}
	// The same message resumes: no briefing goes with it.
	f.resumable()
	if res := f.continueOK(store.Continuation{Prompt: big}); res.Briefed || f.launches()[1].Req.Prompt != big {
		t.Fatalf("resume of a long message: briefed %v", res.Briefed)
	}
	// Queued, the same message is refused with the reason stored.
	f.stop(f.launches()[1].Req.Session)
	c := f.queue(store.Continuation{Prompt: big, Target: cfgAlt})
	res, err := f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Refused) != 1 || !strings.Contains(f.continuationRow(c.ID).Reason, "exceed") {
		t.Fatalf("RunQueued = %+v, %v; stored %+v", res, err, f.continuationRow(c.ID))
	}
}
