package session_test

import (
	"context"
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
)

// A message sent while a turn runs waits in the queue; when that turn
// ends, the host delivers it as the prompt of the next turn.
func ExampleService_Message() {
	ctx := context.Background()
	eng := enginetest.New(enginetest.Options{})
	defer eng.Close()
	svc, err := session.New(memstore.New(), eng, session.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = svc.Close(ctx) }()
	ws := baton.WorkspaceID("repo")
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Config: baton.EngineConfig{Engine: "demo"}}); err != nil {
		fmt.Println(err)
		return
	}

	in, _ := svc.Message(ctx, ws, "Add a --verbose flag.") // idle: delivered at once
	fmt.Println(in.Text, "->", in.State)
	in, _ = svc.Message(ctx, ws, "Document it too.") // the first turn still runs
	fmt.Println(in.Text, "->", in.State)

	// The first turn ends (here: stopped); the queue moves on.
	if _, err := svc.Stop(ctx, ws); err != nil {
		fmt.Println(err)
		return
	}
	if _, ok, err := svc.DeliverPending(ctx, ws); err != nil || !ok {
		fmt.Println("not delivered:", err)
		return
	}
	all, _ := session.List[store.Instruction](ctx, svc, ws)
	for _, in := range all {
		fmt.Println(in.Text, "->", in.State)
	}
	// Output:
	// Add a --verbose flag. -> delivered
	// Document it too. -> pending
	// Add a --verbose flag. -> delivered
	// Document it too. -> delivered
}
