package mcpserver_test

import (
	"fmt"
	"maps"
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// A turn's Access travels in headers of its own over HTTP, and in the
// environment of the stdio bridge; package agent writes either into the
// agent CLI's MCP configuration.
func ExampleAccess_Header() {
	acc := mcpserver.Access{Scope: mcpserver.ScopeReport, Workspace: "ws-1", Handoff: "hof-1", Token: baton.ParseToken("tok-of-this-attempt")}
	h := acc.Header()
	for _, k := range slices.Sorted(maps.Keys(h)) {
		fmt.Println(k+":", h.Get(k))
	}
	fmt.Println(acc.Environ("http://127.0.0.1:7070/mcp"))
	fmt.Println(mcpserver.Tools(acc.Scope))
	// Output:
	// X-Baton-Handoff: hof-1
	// X-Baton-Scope: report
	// X-Baton-Token: tok-of-this-attempt
	// X-Baton-Workspace: ws-1
	// [BATON_MCP_URL=http://127.0.0.1:7070/mcp BATON_MCP_SCOPE=report BATON_MCP_WORKSPACE=ws-1 BATON_MCP_HANDOFF=hof-1 BATON_MCP_TOKEN=tok-of-this-attempt]
	// [submit_session_handoff get_handoff_facts]
}
