package session_test

import (
	"context"
	"fmt"
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
	svc, err := session.New(memstore.New(), eng)
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
	if _, err := svc.Stop(ctx, ws, session.Owner{}); err != nil {
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

// The continuation rule: resume whenever something can be resumed on the
// target's engine and account; otherwise a fresh briefed session, which an
// automated trigger may not start.
func ExamplePlanContinue() {
	claude := baton.EngineConfig{Engine: "claude", Account: "personal"}
	work := baton.EngineConfig{Engine: "claude", Account: "work"}
	history := []store.Session{
		{ID: "s1", Config: claude, NativeID: "0b6c-41", ActivationOrder: 1, Status: store.SessionEnded},
		{ID: "s2", Config: claude, ActivationOrder: 2, Status: store.SessionEnded}, // killed before a native id
	}
	for _, c := range []struct {
		target    baton.EngineConfig
		automated bool
	}{{claude, false}, {work, false}, {work, true}} {
		p := session.PlanContinue(history, c.target, c.automated)
		fmt.Printf("%s %s: %s\n", c.target.Account, p.Action, p.Reason)
	}
	// Output:
	// personal resume: resume session s1 (native id 0b6c-41) on engine "claude" with account "personal"
	// work fresh: no session with a native id on engine "claude" with account "work": a fresh session briefed from the record
	// work refuse: automated trigger may only resume, and there is nothing to resume: no session with a native id on engine "claude" with account "work"; only a user's message may start a fresh briefed session
}

// A run that never got a native session id continues in a fresh session
// whose opening prompt briefs it from the record.
func ExampleService_Continue() {
	ctx := context.Background()
	eng := enginetest.New(enginetest.Options{})
	defer eng.Close()
	svc, _ := session.New(memstore.New(), eng)
	defer func() { _ = svc.Close(ctx) }()
	ws := baton.WorkspaceID("repo")
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Config: baton.EngineConfig{Engine: "demo"}}); err != nil {
		fmt.Println(err)
		return
	}
	transcript := []transcript.Event{
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Fix the flaky test."},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Looking at the retry loop."},
	}
	res, err := svc.Continue(ctx, session.ContinueRequest{
		Workspace: ws, Prompt: "Carry on, please.",
		Task: "Fix the flaky test.", Ending: "killed by a restart", Events: slices.Values(transcript),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Plan.Action, "briefed:", res.Briefed)
	prompt := eng.Launches()[0].Req.Prompt
	fmt.Println(strings.SplitN(prompt, "\n", 2)[0])
	fmt.Println(strings.Contains(prompt, "> killed by a restart"), strings.HasSuffix(prompt, "\n\nCarry on, please."))
	// Output:
	// fresh briefed: true
	// # NEW session: you do not remember the previous one
	// true true
}
