package session_test

import (
	"testing"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// TestEndRecordsUsage: the row of a session keeps the context usage its
// last turn reported, with that turn's launch, written with the turn's
// end: a turn that ends on its own, and one that is stopped; a turn that
// reports none keeps the last.
func TestEndRecordsUsage(t *testing.T) {
	f := newFixture(t)
	ended := func(s store.Session) bool { return s.Status == store.SessionEnded }
	launch := func() store.Usage {
		ls := f.launches()
		return store.Usage{Launch: ls[len(ls)-1].Req.LaunchID}
	}

	f.eng.Push(enginetest.Script{Usage: engine.Usage{Tokens: 120000, Window: 200000}, EndAfterReady: true})
	s := f.start(session.TurnRequest{Prompt: "hello"})
	want := launch()
	want.Tokens, want.Window = 120000, 200000
	if got := f.waitSession(s.ID, ended); got.Usage != want {
		t.Fatalf("after a turn that reported usage: row usage %+v; want %+v", got.Usage, want)
	}

	f.eng.Push(enginetest.Script{EndAfterReady: true})
	f.start(session.TurnRequest{Prompt: "again", Session: s.ID})
	if got := f.waitSession(s.ID, ended); got.Usage != want {
		t.Fatalf("after a turn that reported none: row usage %+v; want the last %+v", got.Usage, want)
	}

	f.eng.Push(enginetest.Script{Usage: engine.Usage{Tokens: 150000}})
	f.start(session.TurnRequest{Prompt: "third", Session: s.ID})
	want = launch()
	want.Tokens = 150000
	f.stop(s.ID)
	if got := f.session(s.ID); got.Usage != want {
		t.Fatalf("after a stopped turn: row usage %+v; want %+v", got.Usage, want)
	}
}
