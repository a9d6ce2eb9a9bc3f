package session_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// queue stores a continuation and fails the test on error.
func (f *fixture) queue(c store.Continuation) store.Continuation {
	f.t.Helper()
	if c.Workspace == "" {
		c.Workspace = f.ws
	}
	out, err := f.svc.QueueContinuation(f.ctx, c)
	if err != nil {
		f.t.Fatalf("QueueContinuation: %v", err)
	}
	return out
}

// continuationRow reads a continuation.
func (f *fixture) continuationRow(id baton.ContinuationID) store.Continuation {
	f.t.Helper()
	var c store.Continuation
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { c, err = tx.GetContinuation(id); return err }); err != nil {
		f.t.Fatal(err)
	}
	return c
}

// restart closes the fixture's Service and replaces it with a new one over
// the same store and engine, as a process restart would.
func (f *fixture) restart() {
	f.t.Helper()
	if err := f.svc.Close(f.ctx); err != nil {
		f.t.Fatal(err)
	}
	f.svc = f.newService(f.st)
}

// killedRun leaves the workspace with a run killed before its session had
// a native id: the engine never confirmed readiness.
func (f *fixture) killedRun() store.Session {
	f.t.Helper()
	f.eng.Push(enginetest.Script{Ready: enginetest.ExitBeforeReady, ExitCode: -1, ExitErr: errors.New("signal: killed")})
	_, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Prompt: theTask})
	mustIs(f.t, err, engine.ErrExitedBeforeReady)
	all, _ := session.List[store.Session](f.ctx, f.svc, f.ws)
	if len(all) != 1 {
		f.t.Fatalf("sessions = %+v", all)
	}
	return f.waitSession(all[0].ID, func(s store.Session) bool { return s.Status == store.SessionEnded })
}

// events serves a transcript per continuation.
func events(tr *pastTalk) func(store.Continuation) iter.Seq[transcript.Event] {
	return func(store.Continuation) iter.Seq[transcript.Event] { return tr.seq() }
}

// THE restart test: a run killed while waiting for its worktree is queued
// with its ending; after a restart, the fresh session's opening prompt
// says how the previous attempt ended, even though the run's own error was
// cleared when it was queued.
func TestRunQueuedAfterRestartBriefsWithTheEnding(t *testing.T) {
	f := newFixture(t)
	killed := f.killedRun()
	c := f.queue(store.Continuation{Session: killed.ID, Task: theTask, Ending: theEnding, Prompt: "Please continue."})
	if c.State != store.ContinuationQueued || c.ID == "" {
		t.Fatalf("queued = %+v", c)
	}
	// The host clears the run's error when it queues the continuation.
	f.update(func(tx store.Tx) error {
		s, err := tx.GetSession(killed.ID)
		if err != nil {
			return err
		}
		s.EndReason = ""
		return tx.PutSession(s)
	})
	f.restart()
	tr := history("Please continue.")
	res, err := f.runQueued(session.Briefing{Events: events(tr)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Started) != 1 || len(res.Refused)+len(res.Deferred) != 0 || res.Started[0].Err != nil {
		t.Fatalf("RunQueued = %+v", res)
	}
	l := f.launches()
	if len(l) != 2 || l[1].Req.Mode != engine.Fresh {
		t.Fatalf("launches = %+v, want the killed run and one fresh start", summaries(l))
	}
	got := l[1].Req.Prompt
	for _, want := range []string{"## How the previous session ended", theEnding, "NEW session", "I will look at the retry loop."} {
		if !strings.Contains(got, want) {
			t.Errorf("opening prompt lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, theTask) != 1 || strings.Count(got, "Please continue.") != 1 {
		t.Fatalf("task or message repeated:\n%s", got)
	}
	st := res.Started[0]
	if !st.Briefed || st.Prompt != got || st.Continuation.State != store.ContinuationStarted || st.Continuation.Reason == "" {
		t.Fatalf("started = %+v", st)
	}
	if row := f.continuationRow(c.ID); row.State != store.ContinuationStarted {
		t.Fatalf("stored state %s", row.State)
	}
	// Never twice: the queue is empty now, on this Service and the next.
	f.restart()
	if res, err := f.runQueued(session.Briefing{}, 0); err != nil || len(res.Started)+len(res.Refused)+len(res.Deferred) != 0 {
		t.Fatalf("second RunQueued = %+v, %v", res, err)
	}
	if n := len(f.launches()); n != 2 {
		t.Fatalf("launches = %d after a second restart, want 2", n)
	}
}

// A blank Ending is taken from the continued session when queued, so that
// clearing that session's end reason later does not erase it.
func TestQueueContinuationKeepsTheSessionsEnding(t *testing.T) {
	f := newFixture(t)
	killed := f.killedRun()
	if killed.EndReason == "" {
		t.Fatal("the killed run has no end reason")
	}
	c := f.queue(store.Continuation{Session: killed.ID, Task: theTask, Prompt: "go on"})
	if c.Ending != killed.EndReason {
		t.Fatalf("stored ending %q, want %q", c.Ending, killed.EndReason)
	}
	f.update(func(tx store.Tx) error {
		s, _ := tx.GetSession(killed.ID)
		s.EndReason = ""
		return tx.PutSession(s)
	})
	f.restart()
	if _, err := f.runQueued(session.Briefing{}, 0); err != nil {
		t.Fatal(err)
	}
	if got := f.launches()[1].Req.Prompt; !strings.Contains(got, killed.EndReason) {
		t.Fatalf("opening prompt lacks the ending %q:\n%s", killed.EndReason, got)
	}
}

func TestRunQueuedAutomated(t *testing.T) {
	t.Run("nothing to resume: refused with its reason", func(t *testing.T) {
		f := newFixture(t)
		f.killedRun()
		c := f.queue(store.Continuation{Task: theTask, Ending: theEnding, Prompt: "usage limit reset: continue", Automated: true})
		f.restart()
		res, err := f.runQueued(session.Briefing{}, 0)
		if err != nil || len(res.Refused) != 1 || len(res.Started) != 0 {
			t.Fatalf("RunQueued = %+v, %v", res, err)
		}
		row := f.continuationRow(c.ID)
		if row.State != store.ContinuationRefused || !strings.HasPrefix(row.Reason, session.ErrResumeOnly.Error()) || cmp.Diff(row, res.Refused[0]) != "" {
			t.Fatalf("stored = %+v, returned %+v", row, res.Refused[0])
		}
		if n := len(f.launches()); n != 1 {
			t.Fatalf("a refused continuation launched (%d launches)", n)
		}
	})
	t.Run("something to resume: resumed byte for byte", func(t *testing.T) {
		f := newFixture(t)
		s := f.resumable()
		f.queue(store.Continuation{Task: theTask, Ending: theEnding, Prompt: "usage limit reset: continue", Automated: true})
		f.restart()
		res, err := f.runQueued(session.Briefing{}, 0)
		if err != nil || len(res.Started) != 1 {
			t.Fatalf("RunQueued = %+v, %v", res, err)
		}
		want := launchSummary{s.ID, engine.Resume, "native-1", "usage limit reset: continue", cfgA}
		if got := summaries(f.launches())[1]; got != want {
			t.Fatalf("launch = %+v, want %+v", got, want)
		}
	})
}

func TestRunQueuedDefers(t *testing.T) {
	f := newFixture(t)
	s := f.resumable()
	first := f.queue(store.Continuation{Prompt: "one"})
	second := f.queue(store.Continuation{Prompt: "two"})
	f.reserve("h1")
	res, err := f.runQueued(session.Briefing{}, 0)
	if err != nil || cmp.Diff([]baton.ContinuationID{first.ID, second.ID}, res.Deferred) != "" || len(res.Started) != 0 {
		t.Fatalf("RunQueued while reserved = %+v, %v", res, err)
	}
	f.release("h1")
	// The first starts; the second finds the workspace busy with it.
	res, err = f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Started) != 1 || res.Started[0].Continuation.ID != first.ID || cmp.Diff([]baton.ContinuationID{second.ID}, res.Deferred) != "" {
		t.Fatalf("RunQueued = %+v, %v", res, err)
	}
	if row := f.continuationRow(second.ID); row.State != store.ContinuationQueued {
		t.Fatalf("deferred continuation is %s", row.State)
	}
	f.stop(s.ID)
	res, err = f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Started) != 1 || res.Started[0].Continuation.ID != second.ID {
		t.Fatalf("RunQueued after stop = %+v, %v", res, err)
	}
	var prompts []string
	for _, l := range f.launches() {
		prompts = append(prompts, l.Req.Prompt)
	}
	if d := cmp.Diff([]string{"first", "one", "two"}, prompts); d != "" {
		t.Fatalf("prompts (-want +got):\n%s", d)
	}
}

// The continuation is marked started before the engine is called.
func TestRunQueuedMarksStartedBeforeLaunch(t *testing.T) {
	var f *fixture
	seen := store.ContinuationState("")
	f = newFixture(t, func(o *enginetest.Options) {
		o.ScriptFor = func(engine.StartRequest) (enginetest.Script, bool) {
			all, err := session.List[store.Continuation](context.Background(), f.svc, f.ws)
			if err == nil && len(all) == 1 {
				seen = all[0].State
			}
			return enginetest.Script{}, false
		}
	})
	f.queue(store.Continuation{Prompt: "go"})
	if _, err := f.runQueued(session.Briefing{}, 0); err != nil {
		t.Fatal(err)
	}
	if seen != store.ContinuationStarted {
		t.Fatalf("state seen by the engine = %q, want started", seen)
	}
}

func TestRunQueuedRetryAndCancel(t *testing.T) {
	missing := baton.Errorf(engine.ErrSessionMissing, "No conversation found")
	for _, cancelled := range []bool{false, true} {
		t.Run(map[bool]string{false: "retried fresh", true: "cancelled meanwhile: no retry"}[cancelled], func(t *testing.T) {
			var f *fixture
			var id baton.ContinuationID
			f = newFixture(t, func(o *enginetest.Options) {
				o.ScriptFor = func(req engine.StartRequest) (enginetest.Script, bool) {
					if req.Mode != engine.Resume {
						return enginetest.Script{}, false
					}
					if cancelled {
						if _, err := f.svc.CancelContinuation(context.Background(), id, "user gave up"); err != nil {
							t.Errorf("CancelContinuation: %v", err)
						}
					}
					return enginetest.Script{StartErr: missing}, true
				}
			})
			f.resumable()
			id = f.queue(store.Continuation{Task: theTask, Prompt: "go"}).ID
			res, err := f.runQueued(session.Briefing{}, 0)
			if err != nil || len(res.Started) != 1 {
				t.Fatalf("RunQueued = %+v, %v", res, err)
			}
			st := res.Started[0]
			wantLaunches, wantState := 3, store.ContinuationStarted
			if cancelled {
				wantLaunches, wantState = 2, store.ContinuationCancelled
			}
			if n := len(f.launches()); n != wantLaunches {
				t.Fatalf("launches = %+v, want %d", summaries(f.launches()), wantLaunches)
			}
			if st.Retried == cancelled || (st.Err != nil) != cancelled || st.Continuation.State != wantState {
				t.Fatalf("started = %+v", st)
			}
			if cancelled && st.Continuation.Reason != "user gave up" {
				t.Fatalf("reason = %q", st.Continuation.Reason)
			}
		})
	}
}

func TestRunQueuedEngineFailureIsRecorded(t *testing.T) {
	f := newFixture(t)
	f.resumable()
	c := f.queue(store.Continuation{Prompt: "go"})
	f.eng.Push(enginetest.Script{StartErr: engine.ErrAuth})
	res, err := f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Started) != 1 || !errors.Is(res.Started[0].Err, engine.ErrAuth) {
		t.Fatalf("RunQueued = %+v, %v", res, err)
	}
	row := f.continuationRow(c.ID)
	if row.State != store.ContinuationStarted || !strings.Contains(row.Reason, "start failed") || !strings.Contains(row.Reason, engine.ErrAuth.Error()) {
		t.Fatalf("stored = %+v", row)
	}
	if n := len(f.launches()); n != 2 {
		t.Fatalf("launches = %d, want 2: no retry after an authentication failure", n)
	}
}

func TestCancelContinuation(t *testing.T) {
	f := newFixture(t)
	c := f.queue(store.Continuation{Prompt: "go", Automated: true})
	got, err := f.svc.CancelContinuation(f.ctx, c.ID, "")
	if err != nil || got.State != store.ContinuationCancelled || got.Reason != "cancelled" {
		t.Fatalf("cancel = %+v, %v", got, err)
	}
	again, err := f.svc.CancelContinuation(f.ctx, c.ID, "other")
	if err != nil || cmp.Diff(got, again) != "" {
		t.Fatalf("second cancel = %+v, %v; want it unchanged", again, err)
	}
	res, err := f.runQueued(session.Briefing{}, 0)
	if err != nil || len(res.Started)+len(res.Refused)+len(res.Deferred) != 0 || len(f.launches()) != 0 {
		t.Fatalf("RunQueued ran a cancelled continuation: %+v, %v", res, err)
	}
	refused := f.queue(store.Continuation{Prompt: "go", Automated: true})
	if _, err := f.runQueued(session.Briefing{}, 0); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.CancelContinuation(f.ctx, refused.ID, "")
	mustIs(t, err, baton.ErrConflict)
	_, err = f.svc.CancelContinuation(f.ctx, "cnt_nope", "")
	mustIs(t, err, store.ErrNotFound)
	all, err := session.List[store.Continuation](f.ctx, f.svc, f.ws)
	if err != nil || len(all) != 2 || all[0].ID != c.ID || all[1].State != store.ContinuationRefused {
		t.Fatalf("Continuations = %+v, %v", all, err)
	}
}

func TestQueueContinuationRejects(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.CreateWorkspace(f.ctx, store.Workspace{ID: "ws-2", Config: cfgA}); err != nil {
		t.Fatal(err)
	}
	foreign := f.insertSession(store.Session{ID: "foreign", Workspace: "ws-2"})
	tests := []struct {
		name string
		ctx  context.Context
		c    store.Continuation
		want error
	}{
		{"nil context", nil, store.Continuation{Workspace: f.ws, Prompt: "x"}, baton.ErrInvalid},
		{"blank prompt", f.ctx, store.Continuation{Workspace: f.ws, Prompt: " "}, baton.ErrInvalid},
		{"ending too long", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x", Ending: strings.Repeat("e", baton.MaxPromptBytes+1)}, baton.ErrInvalid},
		{"bad target", f.ctx, store.Continuation{Workspace: f.ws, Prompt: "x", Target: baton.EngineConfig{Account: "a"}}, baton.ErrInvalid},
		{"unknown workspace", f.ctx, store.Continuation{Workspace: "nope", Prompt: "x"}, session.ErrNoWorkspace},
		{"unknown session", f.ctx, store.Continuation{Workspace: f.ws, Session: "ghost", Prompt: "x"}, session.ErrNoSession},
		{"another workspace's session", f.ctx, store.Continuation{Workspace: f.ws, Session: foreign.ID, Prompt: "x"}, session.ErrNoSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.QueueContinuation(tt.ctx, tt.c)
			mustIs(t, err, tt.want)
		})
	}
	if all, _ := session.List[store.Continuation](f.ctx, f.svc, f.ws); len(all) != 0 {
		t.Fatalf("rejected continuations were stored: %+v", all)
	}
	c := f.queue(store.Continuation{ID: "mine", State: store.ContinuationStarted, Reason: "x", Prompt: "go", Target: baton.EngineConfig{Engine: " demo "}})
	want := store.Continuation{Workspace: f.ws, Prompt: "go", Target: baton.EngineConfig{Engine: "demo"}, State: store.ContinuationQueued, CreatedAt: t0, UpdatedAt: t0}
	if d := cmp.Diff(want, c, cmpopts.IgnoreFields(store.Continuation{}, "ID")); d != "" || c.ID == "mine" {
		t.Fatalf("queued (-want +got):\n%s (id %s)", d, c.ID)
	}
}

func TestRunQueuedAfterClose(t *testing.T) {
	f := newFixture(t)
	c := f.queue(store.Continuation{Prompt: "go"})
	if err := f.svc.Close(f.ctx); err != nil {
		t.Fatal(err)
	}
	_, err := f.runQueued(session.Briefing{}, 0)
	mustIs(t, err, session.ErrClosed)
	if row := f.continuationRow(c.ID); row.State != store.ContinuationQueued {
		t.Fatalf("state after a refused run = %s", row.State)
	}
	var noCtx context.Context
	_, err = f.svc.RunQueued(noCtx, session.Briefing{}, 0)
	mustIs(t, err, baton.ErrInvalid)
}
