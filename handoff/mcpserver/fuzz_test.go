package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// FuzzToolArguments calls each tool's handler with arbitrary argument
// bytes. Whatever they are, a call returns a result, never a protocol
// error or a panic; a refusal carries a code and an action; a page of
// history stays within its budget and never shows the secret.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []struct {
		tool byte
		args string
	}{
		{0, `{"report":"# Report"}`}, {0, `{"report":""}`}, {0, `{"report":1}`}, {0, `[]`}, {0, `null`},
		{1, `{}`}, {1, `{"direction":"newest-first","maxChars":500}`}, {1, `{"cursor":"h1.MC4w"}`},
		{1, `{"maxChars":-5}`}, {1, `{"cursor":"h1.MTAwMC41"}`}, {2, `{}`}, {2, `{"x":1}`}, {2, ``},
	} {
		f.Add(s.tool, []byte(s.args))
	}
	reg := engine.Registry{}
	svc, err := session.New(memstore.New(), reg, session.Options{})
	if err != nil {
		f.Fatal(err)
	}
	co, err := handoff.New(svc, reg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = co.Shutdown(context.Background()) })
	var evs MemHistory
	for i := range 200 {
		evs = append(evs, transcript.Event{Speaker: transcript.Speaker(1 + i%2), Kind: transcript.Message, Text: "chunk ghp_0123456789abcdefghijABCDEFGHIJ012345 é "})
	}
	s, err := New(Config{Coordinator: co,
		History: func(context.Context, baton.WorkspaceID, baton.HandoffID) (History, error) { return evs, nil },
		Facts: func(context.Context, baton.WorkspaceID, baton.HandoffID) (facts.Facts, error) {
			return facts.Facts{Notes: []string{"ok"}}, nil
		}})
	if err != nil {
		f.Fatal(err)
	}
	target := s.GrantTarget("ws", "hof")
	report := Access{Scope: ScopeReport, Workspace: "ws", Handoff: "hof", Token: baton.NewToken()}
	tools := []struct {
		name string
		a    Access
		fn   toolFunc
	}{{toolSubmit, report, s.submit}, {ToolHistory, target, s.history}, {toolFacts, target, s.facts}}

	f.Fuzz(func(t *testing.T, tool byte, args []byte) {
		tl := tools[int(tool)%len(tools)]
		h := s.tool(tl.name, tl.a.Scope, func(*mcp.CallToolRequest) (Access, error) { return tl.a, nil }, tl.fn)
		res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tl.name, Arguments: json.RawMessage(args)}})
		if err != nil || res == nil {
			t.Fatalf("%s(%q): result %v, error %v", tl.name, args, res, err)
		}
		if res.IsError {
			r, ok := res.StructuredContent.(Refusal)
			if !ok || r.Code == "" || r.Action == "" {
				t.Fatalf("%s(%q): refusal %#v", tl.name, args, res.StructuredContent)
			}
			return
		}
		if p, ok := res.StructuredContent.(Page); ok {
			if n := utf8.RuneCountInString(p.Text); n > MaxPageChars {
				t.Fatalf("page of %d characters", n)
			}
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok && strings.Contains(tc.Text, "ghp_0123456789") {
					t.Fatalf("the secret leaked: %q", tc.Text)
				}
			}
		}
	})
}
