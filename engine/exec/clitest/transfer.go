package clitest

import (
	"strings"
	"sync/atomic"
)

// The names of the tools of baton's MCP server (package
// handoff/mcpserver) a Transfer calls; a CLI prefixes them with the
// server's name (mcp__baton__, mcp__baton/).
const (
	ToolSubmit  = "submit_session_handoff"
	ToolHistory = "read_source_history"
	ToolFacts   = "get_handoff_facts"
)

// Transfer scripts the model of an agent that does its part of a baton
// session transfer, as the MCP server offers it its tools. Its Script
// answers, by what a request offers and holds:
//
//   - a request that answers tool calls: "Done.", which ends the turn;
//   - a request offering submit_session_handoff (the source's report-only
//     turn): a call of get_handoff_facts and one of
//     submit_session_handoff with Report;
//   - a request offering read_source_history (a turn of the transfer's
//     target): a call of read_source_history (oldest first) and one of
//     get_handoff_facts, held on the Gate Hold returns, if any;
//   - any other request, and one not streamed (Claude Code sends a few
//     small ones): Reply.
//
// Both calls of a turn are in one reply, so a CLI may run them in either
// order.
type Transfer struct {
	// Reply answers an ordinary turn.
	Reply string
	// Report is the report the report-only turn submits.
	Report string
	// Hold, when set, returns the Gate the reply to the n-th target
	// request (n from 1) waits on, nil for none: a crash test kills the
	// program while its target's request is held.
	Hold func(n int) *Gate
}

// Script returns the Script of tr; each Script counts its own target
// requests.
func (tr Transfer) Script() Script {
	var targets atomic.Int32
	return func(r Request) Reply {
		if !r.Stream {
			return Text(tr.Reply)
		}
		if len(r.Results()) > 0 {
			return Text("Done.")
		}
		facts, _ := r.Tool(ToolFacts)
		if submit, ok := r.Tool(ToolSubmit); ok {
			return Calls(Call{Name: facts}, Call{Name: submit, Input: map[string]string{"report": tr.Report}})
		}
		if hist, ok := r.Tool(ToolHistory); ok {
			rep := Calls(Call{Name: hist, Input: map[string]string{"direction": "oldest-first"}}, Call{Name: facts})
			if n := int(targets.Add(1)); tr.Hold != nil {
				rep.Wait = tr.Hold(n)
			}
			return rep
		}
		return Text(tr.Reply)
	}
}

// HistoryPages returns the results of read_source_history calls that
// reached a, oldest first: what the targets read of the source's
// conversation.
func HistoryPages(a *API) []ToolResult {
	var out []ToolResult
	for _, r := range a.Streamed() {
		for _, res := range r.Results() {
			if strings.HasSuffix(res.Tool, ToolHistory) {
				out = append(out, res)
			}
		}
	}
	return out
}
