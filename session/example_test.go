package session_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// An ordinary message starts a fresh session; the next one resumes it.
func ExampleService() {
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

	s, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "Add a --verbose flag."})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("native id:", s.NativeID, "order:", s.ActivationOrder)
	if _, err := svc.Stop(ctx, ws); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "Now document it."}); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range eng.Launches() {
		fmt.Printf("%s %q %q\n", l.Req.Mode, l.Req.NativeID, l.Req.Prompt)
	}
	// Output:
	// native id: native-1 order: 1
	// fresh "" "Add a --verbose flag."
	// resume "native-1" "Now document it."
}

// A run that never got a native session id continues in a fresh session
// whose opening prompt briefs it from the record.
func ExampleService_Continue() {
	ctx := context.Background()
	eng := enginetest.New(enginetest.Options{})
	defer eng.Close()
	svc, _ := session.New(memstore.New(), eng, session.Options{})
	defer func() { _ = svc.Close(ctx) }()
	ws := baton.WorkspaceID("repo")
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Config: baton.EngineConfig{Engine: "demo"}}); err != nil {
		fmt.Println(err)
		return
	}
	history := []transcript.Event{
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Fix the flaky test."},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Looking at the retry loop."},
	}
	res, err := svc.Continue(ctx, store.Continuation{
		Workspace: ws, Prompt: "Carry on, please.",
		Task: "Fix the flaky test.", Ending: "killed by a restart",
	}, session.Briefing{Events: func(store.Continuation) iter.Seq[transcript.Event] { return slices.Values(history) }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("briefed:", res.Briefed)
	prompt := eng.Launches()[0].Req.Prompt
	fmt.Println(strings.SplitN(prompt, "\n", 2)[0])
	fmt.Println(strings.Contains(prompt, "> killed by a restart"), strings.HasSuffix(prompt, "\n\nCarry on, please."))
	// Output:
	// briefed: true
	// # NEW session: you do not remember the previous one
	// true true
}
