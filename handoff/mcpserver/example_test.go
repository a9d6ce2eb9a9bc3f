package mcpserver_test

import (
	"fmt"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// A host gives Claude Code the server in an --mcp-config file and lets
// it run exactly the tools of the turn with --allowedTools.
func ExampleClaudeHTTPConfig() {
	acc := mcpserver.Access{Scope: mcpserver.ScopeReport, Workspace: "ws-1", Handoff: "hof-1", Token: baton.ParseToken("tok-of-this-attempt")}
	cfg, err := mcpserver.ClaudeHTTPConfig("", "http://127.0.0.1:7070/mcp", acc)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(cfg))
	fmt.Println(mcpserver.AllowedTools("", acc.Scope))
	// Output:
	// {
	//   "mcpServers": {
	//     "baton": {
	//       "type": "http",
	//       "url": "http://127.0.0.1:7070/mcp",
	//       "headers": {
	//         "X-Baton-Handoff": "hof-1",
	//         "X-Baton-Scope": "report",
	//         "X-Baton-Token": "tok-of-this-attempt",
	//         "X-Baton-Workspace": "ws-1"
	//       }
	//     }
	//   }
	// }
	// [mcp__baton__submit_session_handoff mcp__baton__get_handoff_facts]
}

// The stdio form: the CLI launches a subcommand of the host's binary,
// which calls Bridge with BridgeFromEnv(os.Environ()).
func ExampleClaudeStdioConfig() {
	acc := mcpserver.Access{Scope: mcpserver.ScopeTarget, Workspace: "ws-1", Handoff: "hof-1", Token: baton.ParseToken("granted")}
	cfg, err := mcpserver.ClaudeStdioConfig("baton", "http://127.0.0.1:7070/mcp", acc, "/usr/local/bin/myhost", "mcp-bridge")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(cfg))
	// Output:
	// {
	//   "mcpServers": {
	//     "baton": {
	//       "type": "stdio",
	//       "command": "/usr/local/bin/myhost",
	//       "args": [
	//         "mcp-bridge"
	//       ],
	//       "env": {
	//         "BATON_MCP_HANDOFF": "hof-1",
	//         "BATON_MCP_SCOPE": "target",
	//         "BATON_MCP_TOKEN": "granted",
	//         "BATON_MCP_URL": "http://127.0.0.1:7070/mcp",
	//         "BATON_MCP_WORKSPACE": "ws-1"
	//       }
	//     }
	//   }
	// }
}
