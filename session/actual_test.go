package session_test

import (
	"testing"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
)

// TestStartRecordsWhatRan: the row of a started session keeps the model
// and version its engine reported beside the configured model; a later
// launch that reports nothing keeps them, one that reports another model
// replaces it.
func TestStartRecordsWhatRan(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Actual: engine.Actual{Model: "demo-1-next", Version: "9.1"}})
	s := f.start(session.TurnRequest{Prompt: "hello"})
	if s.ActualModel != "demo-1-next" || s.EngineVersion != "9.1" || s.Config.Model != cfgA.Model {
		t.Fatalf("started session = %+v; want actual demo-1-next 9.1 beside the configured %s", s, cfgA.Model)
	}
	f.stop(s.ID)
	if got := f.session(s.ID); got.ActualModel != "demo-1-next" || got.EngineVersion != "9.1" {
		t.Fatalf("stored row = %+v; want actual demo-1-next 9.1", got)
	}

	f.eng.Push(enginetest.Script{})
	again := f.start(session.TurnRequest{Prompt: "again", Session: s.ID})
	if again.ActualModel != "demo-1-next" || again.EngineVersion != "9.1" {
		t.Fatalf("a resume that reports nothing = %+v; want what was recorded kept", again)
	}
	f.stop(again.ID)

	f.eng.Push(enginetest.Script{Actual: engine.Actual{Model: "demo-1-other"}})
	third := f.start(session.TurnRequest{Prompt: "third", Session: s.ID})
	if third.ActualModel != "demo-1-other" || third.EngineVersion != "9.1" {
		t.Fatalf("a resume that reports another model = %+v; want demo-1-other, version kept", third)
	}
}
