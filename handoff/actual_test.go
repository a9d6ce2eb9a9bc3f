package handoff_test

import (
	"strings"
	"testing"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// TestTargetRecordsWhatRan: a transfer's target keeps on its row the
// model and version its engine reported, beside the configured model, and
// the briefing of the next transfer names the model that really wrote the
// source's work.
func TestTargetRecordsWhatRan(t *testing.T) {
	f := newFixture(t)
	f.eng.Push(enginetest.Script{Actual: engine.Actual{Model: "demo-2-next", Version: "3.0"}})
	h := f.create("r1", false)
	h = f.wait(h.ID, store.StateCompleted)
	var target store.Session
	if err := f.st.View(f.ctx, func(tx store.Tx) (err error) { target, err = tx.GetSession(h.TargetSession); return err }); err != nil {
		t.Fatal(err)
	}
	if target.ActualModel != "demo-2-next" || target.EngineVersion != "3.0" || target.Config.Model != f.cfgB.Model {
		t.Fatalf("target row = %+v; want actual demo-2-next 3.0 beside the configured %s", target, f.cfgB.Model)
	}

	next, err := f.co.Create(f.ctx, handoff.Request{Workspace: f.ws, RequestID: "r2", SourceSession: target.ID, Target: f.cfgA})
	if err != nil {
		t.Fatal(err)
	}
	f.wait(next.ID, store.StateCompleted)
	ls := f.eng.Launches()
	prompt := ls[len(ls)-1].Req.Prompt
	if want := "engine demo 3.0, model demo-2-next (configured demo-2)"; !strings.Contains(prompt, want) {
		t.Errorf("the next briefing does not name the model that ran (%q):\n%s", want, prompt)
	}
}
