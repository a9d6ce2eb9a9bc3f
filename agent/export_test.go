package agent

import (
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// The names the tests use for the package's internals.
type (
	WiringOptions     = wiringOptions
	TranscriptHistory = transcriptHistory
)

var (
	NewWiring = newWiring
	History   = history
)

const (
	EnvToken         = envToken
	EnvAuthorization = envAuthorization
)

// Attach gives w the Coordinator and the MCP server, as New does.
func (w *Wiring) Attach(co *handoff.Coordinator, srv *mcpserver.Server) { w.attach(co, srv) }

// ClaudeConfig renders w's --mcp-config file for a.
func (w *Wiring) ClaudeConfig(a mcpserver.Access) ([]byte, error) { return w.render(a) }

// Endpoint returns the MCP server's URL as the CLIs reach it.
func (h *Host) Endpoint() string { return h.endpoint }
