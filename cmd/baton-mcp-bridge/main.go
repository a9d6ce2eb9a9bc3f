// Command baton-mcp-bridge serves baton's handoff MCP tools over stdio,
// for an MCP client that can start a stdio server but cannot send custom
// headers to an HTTP one (the MCP Inspector, some agent CLIs). It
// forwards every message to the host's streamable HTTP endpoint
// (mcpserver.Handler) with the access of one turn in the X-Baton-*
// headers, and relays the answers (mcpserver.Bridge).
//
// It reads its configuration from the environment, as
// mcpserver.Access.Environ writes it:
//
//	BATON_MCP_URL        the host's MCP endpoint, e.g. http://127.0.0.1:8080/mcp
//	BATON_MCP_SCOPE      report or target
//	BATON_MCP_WORKSPACE  the workspace id
//	BATON_MCP_HANDOFF    the handoff id
//	BATON_MCP_TOKEN      the turn's token
//	BATON_MCP_BEARER     the host's own bearer token, when its endpoint
//	                     requires one (the workshop with BATON_TOKEN set)
//
// It exits 0 when the client closes its standard input, 2 for a missing
// or malformed variable, 1 when the endpoint cannot be reached.
//
// With the MCP Inspector's command line (0.15.0 runs on Node 20), list the
// tools and call one:
//
//	npx @modelcontextprotocol/inspector@0.15.0 --cli \
//	  -e BATON_MCP_URL=http://127.0.0.1:8080/mcp -e BATON_MCP_SCOPE=target \
//	  -e BATON_MCP_WORKSPACE=ws-1 -e BATON_MCP_HANDOFF=hof-1 -e BATON_MCP_TOKEN=... \
//	  baton-mcp-bridge --method tools/list
//
//	npx @modelcontextprotocol/inspector@0.15.0 --cli -e ... \
//	  baton-mcp-bridge --method tools/call --tool-name get_handoff_facts
//
// Install it with: go install github.com/batonhq/baton/cmd/baton-mcp-bridge@latest
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/batonhq/baton/handoff/mcpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Environ())
	stop()
	os.Exit(code)
}

func run(ctx context.Context, environ []string) int {
	err := mcpserver.Bridge(ctx, environ, nil, nil)
	switch {
	case err == nil || errors.Is(err, context.Canceled):
		return 0
	case errors.Is(err, mcpserver.ErrBadConfig):
		fmt.Fprintln(os.Stderr, "baton-mcp-bridge:", err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "baton-mcp-bridge:", err)
	return 1
}
