// Command agent hands a real Claude Code agent's work to a fresh session
// with baton, and survives a crash in the middle of it:
//
//	agent <data dir> <project dir>
//
// The first run creates a workspace on the project, runs the source's turn
// ("Fix the parser."), and hands it to a fresh session on another model
// with a report: the source writes its report in a report-only turn and
// submits it over MCP, and the target reads the source's conversation with
// read_source_history. Kill the program in the middle of it (kill -9) and
// run it again: Recover finds the transfer interrupted (nothing is
// relaunched behind your back), and the program retries it; the report
// is kept, so the retry goes straight to a new target.
//
// It needs the claude CLI (BATON_CLAUDE_BIN, else claude on PATH), with
// its credentials. Its test runs it against a scripted Messages API.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

const ws = baton.WorkspaceID("parser")

func main() {
	ctx, data, project := context.Background(), os.Args[1], os.Args[2]
	st := must(badgerstore.Open(filepath.Join(data, "store"), badgerstore.Options{}))
	ln := must(net.Listen("tcp", "127.0.0.1:0")) // the MCP server, for the CLI only
	h := must(agent.New(st, agent.Config{Addr: ln.Addr().String(), DataDir: data,
		Claude: &exec.ClaudeOptions{Command: os.Getenv("BATON_CLAUDE_BIN")}}))
	go http.Serve(ln, h.Handler())
	co := h.Coordinator
	rec := must(co.Recover(ctx)) // after a crash: the transfer is interrupted
	for _, t := range rec.Handoffs {
		fmt.Println("recovered", t.ID, t.State, "report kept:", t.Report != "")
		must(co.Decide(ctx, ws, t.ID, handoff.Retry))
		wait(ctx, h, t.ID)
	}
	if len(rec.Handoffs) == 0 {
		must(co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: ws, Root: project, Mission: "Fix the parser.",
			Config: baton.EngineConfig{Engine: agent.Claude, Model: "claude-sonnet-4-5"}}))
		src := must(co.Sessions().Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "Fix the parser."}))
		check(h.Idle(ctx, ws)) // the source's turn ends
		t := must(co.Create(ctx, handoff.Request{Workspace: ws, RequestID: "move-1", SourceSession: src.ID,
			GenerateSummary: true, Target: baton.EngineConfig{Engine: agent.Claude, Model: "claude-opus-4-1"}}))
		wait(ctx, h, t.ID)
	}
	check(h.Close(ctx))
	check(st.Close())
}

// wait waits for the transfer to settle and for the target's first turn
// to end.
func wait(ctx context.Context, h *agent.Host, id baton.HandoffID) {
	t := must(h.Coordinator.Wait(ctx, ws, id))
	fmt.Println("transfer", t.ID, t.State, "attempt", t.Attempt, "report:", t.Report != "", t.Error)
	check(h.Idle(ctx, ws))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func must[T any](v T, err error) T {
	check(err)
	return v
}
