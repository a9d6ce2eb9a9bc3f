package enginetest_test

import (
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
)

// TestScriptedUsage: a process reports its script's Usage in its exit
// status, whether its turn ended or it was stopped; the zero script
// reports none.
func TestScriptedUsage(t *testing.T) {
	e, _ := newEngine(t, enginetest.Options{})
	want := engine.Usage{Tokens: 150000, Window: 200000}
	e.Push(enginetest.Script{Usage: want, EndAfterReady: true}, enginetest.Script{Usage: want}, enginetest.Script{EndAfterReady: true})
	ctx := t.Context()
	for i, ws := range []baton.SessionID{"s1", "s2", "s3"} {
		p, err := e.Start(ctx, engine.StartRequest{Workspace: baton.WorkspaceID(ws), Session: ws, Prompt: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if _, err := p.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		<-p.Done()
		w := want
		if i == 2 {
			w = engine.Usage{}
		}
		if got := p.Exit().Usage; got != w {
			t.Errorf("launch %d: Exit().Usage = %+v; want %+v", i, got, w)
		}
	}
}
