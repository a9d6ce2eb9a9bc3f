package handoff_test

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// The shape of an embedding, as the README shows it: the embedded store,
// one Recover before serving, a transfer, Wait for it to settle and Watch
// its progress from the change feed.
func ExampleCoordinator_Recover() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "baton-example")
	defer os.RemoveAll(dir)
	logger := zap.NewNop()
	myEngine := enginetest.New(enginetest.Options{})
	defer myEngine.Close()

	st, err := badgerstore.Open(dir, badgerstore.Options{Logger: logger})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	engines := engine.Registry{"claude": myEngine}
	svc, err := session.New(st, engines, session.Options{Logger: logger})
	if err != nil {
		fmt.Println(err)
		return
	}
	co, err := handoff.New(svc, engines)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer co.Shutdown(ctx)
	// Once, before serving: session rows a crash left running are ended,
	// the launches it left are reaped, and pending transfers become
	// "interrupted". Nothing is relaunched.
	if _, err := co.Recover(ctx); err != nil {
		fmt.Println(err)
		return
	}

	_, _ = svc.CreateWorkspace(ctx, store.Workspace{ID: "ws-1", Config: baton.EngineConfig{Engine: "claude", Model: "sonnet"}})
	current, _ := svc.Start(ctx, session.TurnRequest{Workspace: "ws-1", Prompt: "Fix the parser."})

	h, err := co.Create(ctx, handoff.Request{
		Workspace: "ws-1", RequestID: "req-42", SourceSession: current.ID,
		Target: baton.EngineConfig{Engine: "claude", Model: "opus"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Wait returns once the transfer completed, or needs a decision.
	h, err = co.Wait(ctx, "ws-1", h.ID)
	fmt.Println(h.State, err)
	// Watch replays the change feed from any sequence number, then follows.
	watch, stop := context.WithCancel(ctx)
	defer stop()
	for ch, err := range co.Watch(watch, "ws-1", 0) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ch.Handoff != nil {
			fmt.Println(ch.Seq > 0, ch.Handoff.State)
			if ch.Handoff.State == store.StateCompleted {
				break
			}
		}
	}
	// Output:
	// completed <nil>
	// true stopping
	// true starting
	// true completed
}
