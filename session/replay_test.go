package session_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// A continuation on another account cannot resume: its fresh session is
// briefed with the conversation the engine recorded of the session it
// continues, when the caller gives no events of its own.
func TestContinueReplaysTheEnginesTranscript(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Reply: "The parser accepts trailing commas now; go test ./... passes."})
	s := f.start(session.TurnRequest{Prompt: "Make the parser accept trailing commas."})
	f.stop(s.ID)
	res := f.continueOK(store.Continuation{Session: s.ID, Prompt: "Now the lexer.", Target: cfgAlt})
	if !res.Briefed {
		t.Fatalf("not briefed: %+v", res)
	}
	for _, want := range []string{"User:\n> Make the parser accept trailing commas.", "Agent:\n> The parser accepts trailing commas now; go test ./... passes."} {
		if !strings.Contains(res.Briefing, want) {
			t.Errorf("briefing lacks %q:\n%s", want, res.Briefing)
		}
	}
	if strings.Contains(res.Briefing, "not included") {
		t.Errorf("briefing says the conversation was not included:\n%s", res.Briefing)
	}
}

// The caller's own events win over the engine's transcript.
func TestContinueCallersEventsWin(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Reply: "from the engine"})
	s := f.start(session.TurnRequest{Prompt: "the task"})
	f.stop(s.ID)
	mine := []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.Message, Text: "from the caller"}}
	res := f.continueOK(store.Continuation{Session: s.ID, Prompt: "go on", Target: cfgAlt}, session.Briefing{Events: always(func(yield func(transcript.Event) bool) {
		for _, ev := range mine {
			if !yield(ev) {
				return
			}
		}
	})})
	if !strings.Contains(res.Briefing, "from the caller") || strings.Contains(res.Briefing, "from the engine") {
		t.Fatalf("briefing does not replay the caller's events alone:\n%s", res.Briefing)
	}
}

// plainEngine hides the scripted engine's capabilities but Start.
type plainEngine struct{ e engine.Engine }

func (p plainEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	return p.e.Start(ctx, req)
}

// brokenTranscript is an engine whose transcripts break after one event.
type brokenTranscript struct{ *enginetest.Engine }

var errDisk = errors.New("disk on fire")

func (b brokenTranscript) Transcript(ctx context.Context, sid baton.SessionID) (iter.Seq2[transcript.Event, error], error) {
	return func(yield func(transcript.Event, error) bool) {
		if yield(transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: "half a conversation"}, nil) {
			yield(transcript.Event{}, errDisk)
		}
	}, nil
}

func TestReplayWithoutATranscript(t *testing.T) {
	eng := enginetest.New(enginetest.Options{Default: enginetest.Script{Reply: "an answer"}})
	t.Cleanup(eng.Close)
	ctx := context.Background()
	render := func(in recap.Input) string { return recap.Conversation(in, recap.Limits{}) }
	for _, tc := range []struct {
		name string
		eng  engine.Engine
		want []string
		not  []string
	}{
		{"an engine without the capability", plainEngine{eng}, []string{"not included in this briefing: no transcript of it is available here."}, []string{"Nothing was exchanged"}},
		{"a transcript that fails midway", brokenTranscript{eng}, []string{"not included in this briefing: its transcript could not be read: disk on fire"}, []string{"half a conversation", "Nothing was exchanged"}},
		{"the scripted engine", eng, []string{"User:\n> hello", "Agent:\n> an answer"}, []string{"not included"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memstore.New()
			svc, err := session.New(st, tc.eng, session.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { svc.Close(ctx) })
			if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Config: cfgA}); err != nil {
				t.Fatal(err)
			}
			s, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			seq, why, err := session.Supervise(svc).Conversation(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := workspace.Replay(ctx, seq, recap.Input{Task: "the task", Omitted: why}, render)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("briefing lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("briefing has %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestTranscriptErrors(t *testing.T) {
	f := newFixture(t)
	if _, err := session.Transcript(f.ctx, f.svc, "ses_nope"); !errors.Is(err, session.ErrNoSession) {
		t.Errorf("Transcript(unknown) = %v; want ErrNoSession", err)
	}
	reg := engine.Registry{"demo": plainEngine{f.eng}}
	svc, err := session.New(f.st, reg, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(f.ctx) })
	s := f.start(session.TurnRequest{Prompt: "x"})
	if _, err := session.Transcript(f.ctx, svc, s.ID); !errors.Is(err, engine.ErrNoTranscript) {
		t.Errorf("Transcript through an engine without the capability = %v; want engine.ErrNoTranscript", err)
	}
}
