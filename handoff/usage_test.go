package handoff_test

import (
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// TestTransferRecordsUsage: the ends a transfer records keep the context
// usage the turns reported, with their launches: the source's, stopped
// by the transfer (its end is recorded in the transfer's transaction),
// and the target's, whose first turn ended before readiness and so
// completed the transfer.
func TestTransferRecordsUsage(t *testing.T) {
	f := newFixture(t)
	if _, err := f.svc.Stop(f.ctx, f.ws); err != nil {
		t.Fatal(err)
	}
	src, tgt := engine.Usage{Tokens: 170000, Window: 200000}, engine.Usage{Tokens: 9000, Window: 1000000}
	f.eng.Push(enginetest.Script{Usage: src}, enginetest.Script{Ready: enginetest.ExitBeforeReady, Usage: tgt})
	if _, err := f.svc.Start(f.ctx, session.TurnRequest{Workspace: f.ws, Session: f.src.ID, Prompt: "go on"}); err != nil {
		t.Fatal(err)
	}
	h := f.wait(f.create("r1", false).ID, store.StateCompleted)
	ls := f.eng.Launches()
	if len(ls) != 3 {
		t.Fatalf("%d launches; want the source's two and the target's", len(ls))
	}
	for _, tc := range []struct {
		what string
		id   baton.SessionID
		want store.Usage
	}{
		{"source", f.src.ID, store.Usage{Tokens: src.Tokens, Window: src.Window, Launch: ls[1].Req.LaunchID}},
		{"target", h.TargetSession, store.Usage{Tokens: tgt.Tokens, Window: tgt.Window, Launch: ls[2].Req.LaunchID}},
	} {
		var s store.Session
		if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { s, err = tx.GetSession(tc.id); return err }); err != nil {
			t.Fatal(err)
		}
		if s.Usage != tc.want {
			t.Errorf("%s row usage = %+v; want %+v", tc.what, s.Usage, tc.want)
		}
	}
}
