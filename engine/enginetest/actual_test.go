package enginetest_test

import (
	"testing"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
)

// TestScriptedActual: a process reports its script's Actual from its
// start; the zero script reports nothing.
func TestScriptedActual(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	want := engine.Actual{Model: "m-next", Version: "1.2.3"}
	e.Push(enginetest.Script{Actual: want}, enginetest.Script{})
	ctx := t.Context()
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Actual(); got != want {
		t.Errorf("Actual = %+v; want %+v", got, want)
	}
	q, err := e.Start(ctx, engine.StartRequest{Workspace: "ws2", Session: "s2", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Actual(); got != (engine.Actual{}) {
		t.Errorf("a script without one reports %+v", got)
	}
}
