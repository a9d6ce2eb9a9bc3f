//go:build linux

package agent_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// A real Claude Code agent, wired with one call: a transfer with a report
// submitted over MCP, a crash while the target starts (the first process
// is abandoned: its coordinator is never shut down), Recover in a new
// process, and a retry whose target reads the source's history. The CLI
// talks to a scripted Messages API (package clitest) instead of the real
// one; the example is skipped without the CLI, except under CI=true.
func ExampleNew() {
	ctx := context.Background()
	bin, _ := clitest.LookBin(clitest.EnvClaudeBin, "claude")
	crash := clitest.NewGate() // holds the first target's request: never opened
	api := clitest.StartMessages(clitest.Transfer{Reply: "I fixed the tokenizer.", Report: "The parser is fixed.",
		Hold: func(n int) *clitest.Gate {
			if n == 1 {
				return crash
			}
			return nil
		}}.Script())
	defer api.Close()
	dir, err := os.MkdirTemp("", "agent-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	env := api.ClaudeEnv(filepath.Join(dir, "home"))

	// start is one process of the program: the store, the Host, its MCP
	// server on loopback.
	start := func() (*agent.Host, store.Store, net.Listener) {
		st, err := badgerstore.Open(filepath.Join(dir, "store"), badgerstore.Options{})
		if err != nil {
			panic(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(err)
		}
		h, err := agent.New(st, agent.Config{Addr: ln.Addr().String(), DataDir: filepath.Join(dir, "data"),
			Claude: &exec.ClaudeOptions{Command: bin}, Exec: exec.Options{Env: env},
			// A CLI starts slowly on a busy machine.
			Handoff: []handoff.Option{handoff.WithTimeouts(handoff.Timeouts{Ready: 10 * time.Minute})}})
		if err != nil {
			panic(err)
		}
		go http.Serve(ln, h.Handler())
		return h, st, ln
	}

	h, st, ln := start()
	co := h.Coordinator
	if _, err := co.Recover(ctx); err != nil {
		fmt.Println(err)
		return
	}
	ws := baton.WorkspaceID("parser")
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: ws, Root: dir, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: agent.Claude, Model: "claude-sonnet-4-5"}}); err != nil {
		fmt.Println(err)
		return
	}
	src, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "Fix the parser."})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := h.Idle(ctx, ws); err != nil {
		fmt.Println(err)
		return
	}
	t, err := co.Create(ctx, handoff.Request{Workspace: ws, RequestID: "move-1", SourceSession: src.ID,
		GenerateSummary: true, Target: baton.EngineConfig{Engine: agent.Claude, Model: "claude-opus-4-1"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	<-crash.Held() // the report is stored, the target is starting

	// The process dies: nothing of it is shut down; its store and its
	// listener go away with it.
	ln.Close()
	st.Close()
	defer h.Close(ctx) // (only to free this example's process)

	h2, st2, _ := start()
	defer st2.Close()
	defer h2.Close(ctx)
	rec, err := h2.Coordinator.Recover(ctx)
	if err != nil || len(rec.Handoffs) != 1 {
		fmt.Println(rec, err)
		return
	}
	fmt.Println("recovered:", rec.Handoffs[0].State, "report kept:", rec.Handoffs[0].Report != "")
	if _, err := h2.Coordinator.Decide(ctx, ws, t.ID, handoff.Retry); err != nil {
		fmt.Println(err)
		return
	}
	t, err = h2.Coordinator.Wait(ctx, ws, t.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("retried:", t.State, "attempt", t.Attempt)
	if err := h2.Idle(ctx, ws); err != nil {
		fmt.Println(err)
		return
	}
	for _, page := range clitest.HistoryPages(api) {
		fmt.Println("the target read the source's history:", strings.Contains(page.Text, "I fixed the tokenizer."))
	}
	// Output:
	// recovered: interrupted report kept: true
	// retried: completed attempt 2
	// the target read the source's history: true
}
