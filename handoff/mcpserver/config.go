package mcpserver

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/batonhq/baton"
)

// ClaudeServer is one entry of the "mcpServers" object of an MCP
// configuration file as Claude Code reads it (--mcp-config).
type ClaudeServer struct {
	// Type is "http" or "stdio".
	Type string `json:"type"`
	// URL and Headers for "http".
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Command, Args and Env for "stdio".
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// ClaudeHTTPConfig renders the --mcp-config JSON of Claude Code for one
// server called name (DefaultName when empty) reached over streamable HTTP
// at endpoint with a's headers. The result holds the token: write it to a
// file only the agent can read, and delete it after the turn. Errors:
// ErrBadConfig for a name Claude Code would not accept (letters, digits,
// '_' and '-' only) or a malformed Access.
func ClaudeHTTPConfig(name, endpoint string, a Access) ([]byte, error) {
	h := map[string]string{}
	for k, v := range a.Header() {
		h[k] = v[0]
	}
	return claudeConfig(name, a, ClaudeServer{Type: "http", URL: endpoint, Headers: h})
}

// ClaudeStdioConfig renders the --mcp-config JSON of Claude Code for one
// server called name that the CLI launches as command with args (a
// subcommand of the host's binary that calls Bridge), with a and endpoint
// in its environment (Access.Environ). Same caveats and errors as
// ClaudeHTTPConfig.
func ClaudeStdioConfig(name, endpoint string, a Access, command string, args ...string) ([]byte, error) {
	env := map[string]string{}
	for _, kv := range a.Environ(endpoint) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return claudeConfig(name, a, ClaudeServer{Type: "stdio", Command: command, Args: slices.Clone(args), Env: env})
}

func claudeConfig(name string, a Access, s ClaudeServer) ([]byte, error) {
	if name == "" {
		name = DefaultName
	}
	if !validName(name) {
		return nil, baton.Errorf(ErrBadConfig, "server name %q: use letters, digits, '_' and '-'", name)
	}
	if err := a.valid(); err != nil {
		return nil, baton.Errorf(ErrBadConfig, "%v", err)
	}
	return json.MarshalIndent(map[string]map[string]ClaudeServer{"mcpServers": {name: s}}, "", "  ")
}

// AllowedTools returns the names Claude Code gives the tools of scope on a
// server called name (DefaultName when empty), mcp__<name>__<tool>, for
// its --allowedTools flag: a CLI runs an MCP tool only when that flag
// names it.
func AllowedTools(name string, scope Scope) []string {
	if name == "" {
		name = DefaultName
	}
	var out []string
	for _, t := range Tools(scope) {
		out = append(out, "mcp__"+name+"__"+t)
	}
	return out
}

func validName(s string) bool {
	for _, c := range s {
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}
