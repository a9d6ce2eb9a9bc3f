package handoff_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// A transfer from demo-1 to demo-2 without a summary, on the in-memory
// store and the scripted engine. The observer says when the transfer has
// settled, so nothing polls.
func ExampleCoordinator() {
	ctx := context.Background()
	eng := enginetest.New(enginetest.Options{})
	defer eng.Close()
	settled := make(chan store.Handoff, 1)
	engines := engine.Registry{"demo": eng}
	svc, err := session.New(memstore.New(), engines, session.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	co, err := handoff.New(svc, engines,
		handoff.WithObserver(func(ev handoff.Event) {
			switch ev.Handoff.State {
			case store.StateCompleted, store.StateFailed, store.StateCancelled, store.StateInterrupted:
				select {
				case settled <- ev.Handoff:
				default: // the observer must never block
				}
			}
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer co.Shutdown(ctx) // and so svc

	_, err = svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: "demo", Model: "demo-1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Fix the parser."})
	if err != nil {
		fmt.Println(err)
		return
	}

	req := handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: src.ID,
		Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}}
	h, err := co.Create(ctx, req)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created:", h.State, "attempt", h.Attempt)

	h = <-settled
	cur, err := svc.Current(ctx, "ws")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("settled:", h.State)
	fmt.Println("current is the target:", cur.ID == h.TargetSession, "on", cur.Config.Model)
	fmt.Println("workspace writable:", co.Sessions().AssertWritable(ctx, "ws") == nil)

	// Create is idempotent: the same request id and request return the
	// handoff as it is now, with no side effect.
	again, err := co.Create(ctx, req)
	fmt.Println("replay:", again.ID == h.ID, again.State, err)
	fmt.Println("launches:", len(eng.Launches()))
	// Output:
	// created: stopping attempt 1
	// settled: completed
	// current is the target: true on demo-2
	// workspace writable: true
	// replay: true completed <nil>
	// launches: 2
}

// The machine as a picture: Mermaid (rendered on GitHub, as in README.md)
// and Graphviz DOT, both from the table that configures the machine.
func ExampleMachineGraph() {
	g := handoff.MachineGraph()
	lines := strings.Split(g.Mermaid, "\n")
	for _, l := range lines[:4] {
		fmt.Println(l)
	}
	fmt.Println("...")
	fmt.Println("DOT is a digraph:", strings.HasPrefix(g.DOT, "digraph {"))
	// Output:
	// stateDiagram-v2
	//     [*] --> stopping: Create
	//     stopping --> generating: SourceStopped [summary wanted, source resumable]
	//     stopping --> failed: SourceStopped [summary wanted, source not resumable]
	// ...
	// DOT is a digraph: true
}
