package agent

import (
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// The names the tests use for the package's internals.
type (
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

// Claude and Codex return the profiles New registers for Config.Claude
// and Config.Codex.
func (w *Wiring) Claude(o exec.ClaudeOptions) exec.Profile { return w.claude(o) }
func (w *Wiring) Codex(o exec.CodexOptions) exec.Profile   { return w.codex(o) }

// ClaudeConfig renders w's --mcp-config file for a.
func (w *Wiring) ClaudeConfig(a mcpserver.Access) ([]byte, error) { return w.render(a) }

// CLI returns the exec engine registered as name (Claude, Codex, or a
// name of Config.Profiles), nil when there is none.
func (h *Host) CLI(name string) *exec.Engine { return h.clis[name] }

// Endpoint returns the MCP server's URL as the CLIs reach it.
func (h *Host) Endpoint() string { return h.Wiring.endpoint }
