//go:build linux

package acp_test

import (
	"context"
	"fmt"
	"os"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/transcript"
)

// An engine on an ACP agent's command line (here the tests' scripted agent;
// "claude-agent-acp" or "gemini --experimental-acp" in a program): a fresh
// session's turn, its session id, and the agent's reply read back from the
// transcript.
func Example() {
	ctx := context.Background()
	data, _ := os.MkdirTemp("", "acp-example-")
	defer os.RemoveAll(data)
	e, err := acp.New(acp.Options{
		Command: bins["agent"], // the agent's command line: Command and Args
		Env:     []string{"PATH=" + os.Getenv("PATH"), "ACPAGENT_DIR=" + data},
		DataDir: data,
	})
	if err != nil {
		panic(err)
	}
	defer e.Close(ctx)
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Mode: engine.Fresh, Turn: transcript.Normal,
		Config: baton.EngineConfig{Engine: "scripted"}, Dir: data, Prompt: "hello"})
	if err != nil {
		panic(err)
	}
	id, err := p.Ready(ctx) // the session id, once the turn's first update came
	if err != nil {
		panic(err)
	}
	<-p.Done() // one agent process per turn: it ends with the turn
	fmt.Println(id != "", p.Exit().Clean())
	seq, _ := e.Transcript(ctx, "s1")
	for ev := range seq {
		if ev.Speaker == transcript.Agent {
			fmt.Println(ev.Text)
		}
	}
	// Output:
	// true true
	// echo: hello
}
