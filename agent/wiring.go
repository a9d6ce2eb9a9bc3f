package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/transcript"
)

// configFile is the name of the launch file that holds the MCP
// configuration: its path is {file:mcp.json} in a profile's templates.
const configFile = "mcp.json"

// defaultName is the MCP server's name in the configurations when
// Config.Name is empty: Claude Code calls its tools mcp__baton__<tool>.
const defaultName = "baton"

// Wiring renders, for each launch of an exec engine, the MCP configuration
// that points the agent CLI at baton's MCP server with the credentials of
// that turn. Safe for concurrent use.
type Wiring struct {
	// endpoint is the URL at which the host serves the mcpserver.Server's
	// Handler, on the loopback listener of Config.Addr. name is the
	// server's name in the MCP configuration (Config.Name, defaultName
	// when empty): Claude Code calls its tools mcp__<name>__<tool>.
	endpoint, name string
	// bridge, when set, is the command line of the host's stdio bridge
	// subcommand (Config.Bridge): the CLI launches it with the turn's
	// Access in its environment instead of reaching endpoint over HTTP
	// itself.
	bridge []string
	// bearer, when set, is the bearer token the host's MCP endpoint
	// requires (Config.Bearer): every configuration carries it as
	// "Authorization: Bearer" beside the turn's own credentials.
	bearer baton.Token

	mu     sync.Mutex
	co     *handoff.Coordinator
	srv    *mcpserver.Server
	grants map[baton.HandoffID]mcpserver.Access
}

// newWiring returns the Wiring of cfg's Addr, Name, Bridge and Bearer; New
// builds one for its Host. Errors: ErrBadConfig when Addr is not a
// loopback host:port, or the Name one Claude Code would not accept.
func newWiring(cfg Config) (*Wiring, error) {
	endpoint, err := endpointOf(cfg.Addr)
	if err != nil {
		return nil, err
	}
	w := &Wiring{endpoint: endpoint, name: cmp.Or(cfg.Name, defaultName), bridge: slices.Clone(cfg.Bridge), bearer: cfg.Bearer,
		grants: map[baton.HandoffID]mcpserver.Access{}}
	if !validName(w.name) {
		return nil, baton.Errorf(ErrBadConfig, "server name %q: use letters, digits, '_' and '-'", w.name)
	}
	return w, nil
}

// attach gives w the Coordinator and the MCP server, which are built after
// the engine (the Coordinator needs the engine, the server the
// Coordinator). Report-only turns need neither: their credentials are in
// their start request. Until attach, target turns get no MCP server.
func (w *Wiring) attach(co *handoff.Coordinator, srv *mcpserver.Server) {
	w.mu.Lock()
	w.co, w.srv = co, srv
	w.mu.Unlock()
}

// Launch is the MCP side of one launch.
type Launch struct {
	// Name and URL are the MCP server's name and address, for an engine
	// that passes the server in its protocol rather than in Config (an
	// ACP agent's mcpServers).
	Name, URL string
	// Access is what the turn presents to the server.
	Access mcpserver.Access
	// Config is the MCP configuration file's content (it holds the token).
	Config []byte
	// Tools are the names Claude Code gives the tools the turn may call,
	// mcp__<Name>__<tool>.
	Tools []string
}

// For returns the MCP side of a launch: for a report-only turn, its report
// credentials (the attempt's generation token) and the report scope's
// tools (submit_session_handoff, get_handoff_facts); for a turn of the
// target session of a transfer of this Coordinator, a target grant of the
// Server (read_source_history, get_handoff_facts), minted at the first
// launch of that handoff and reused by the next ones. ok is false for any
// other launch, which gets no MCP server. Errors: the Coordinator's
// (finding the handoff of a target session).
func (w *Wiring) For(ctx context.Context, req engine.StartRequest) (l Launch, ok bool, err error) {
	var a mcpserver.Access
	switch {
	case req.Turn == transcript.ReportOnly:
		if req.Report == nil {
			return Launch{}, false, nil
		}
		a = mcpserver.ReportAccess(*req.Report)
	default:
		if a, ok, err = w.target(ctx, req); err != nil || !ok {
			return Launch{}, false, err
		}
	}
	a.Bearer = w.bearer
	cfg, err := w.render(a)
	if err != nil {
		return Launch{}, false, err
	}
	return Launch{Name: w.name, URL: w.endpoint, Access: a, Config: cfg, Tools: allowedTools(w.name, a.Scope)}, true, nil
}

// target finds the transfer whose target is req's session, the newest
// when there are several, and returns its grant.
func (w *Wiring) target(ctx context.Context, req engine.StartRequest) (mcpserver.Access, bool, error) {
	w.mu.Lock()
	co, srv := w.co, w.srv
	w.mu.Unlock()
	if co == nil || srv == nil || req.Session == "" {
		return mcpserver.Access{}, false, nil
	}
	hs, err := co.List(ctx, req.Workspace)
	if err != nil {
		return mcpserver.Access{}, false, err
	}
	for _, h := range slices.Backward(hs) {
		if h.TargetSession != req.Session {
			continue
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		a, ok := w.grants[h.ID]
		if !ok {
			a = srv.GrantTarget(h.Workspace, h.ID)
			w.grants[h.ID] = a
		}
		return a, true, nil
	}
	return mcpserver.Access{}, false, nil
}

// Revoke withdraws the target grant of handoff id, if w minted one: the
// next launch of its target gets a new token.
func (w *Wiring) Revoke(id baton.HandoffID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if a, ok := w.grants[id]; ok { // minted by w.srv, so it is set
		w.srv.Revoke(a)
		delete(w.grants, id)
	}
}

// claudeServer is one entry of the "mcpServers" object of an MCP
// configuration file as Claude Code reads it (--mcp-config).
type claudeServer struct {
	Type    string            `json:"type"` // "http" or "stdio"
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// render returns the --mcp-config JSON of Claude Code for a: the server
// reached over streamable HTTP at the endpoint with a's headers, or, with
// a Bridge, launched as the bridge with a and the endpoint in its
// environment (Access.Environ). The result holds the token. Errors:
// ErrBadConfig for a malformed Access (newWiring has checked the name).
func (w *Wiring) render(a mcpserver.Access) ([]byte, error) {
	if a.Token.IsZero() || (a.Scope != mcpserver.ScopeReport && a.Scope != mcpserver.ScopeTarget) || a.Workspace == "" || a.Handoff == "" {
		return nil, baton.Errorf(ErrBadConfig, "malformed access (scope %q)", a.Scope)
	}
	s := claudeServer{Type: "http", URL: w.endpoint, Headers: map[string]string{}}
	if len(w.bridge) > 0 {
		s = claudeServer{Type: "stdio", Command: w.bridge[0], Args: w.bridge[1:], Env: map[string]string{}}
		for _, kv := range a.Environ(w.endpoint) {
			k, v, _ := strings.Cut(kv, "=")
			s.Env[k] = v
		}
	} else {
		for k, v := range a.Header() {
			s.Headers[k] = v[0]
		}
	}
	return json.MarshalIndent(map[string]map[string]claudeServer{"mcpServers": {w.name: s}}, "", "  ")
}

// allowedTools returns the names Claude Code gives the tools of scope on
// the server called name, mcp__<name>__<tool>: in print mode the CLI runs
// an MCP tool only when --allowedTools names it.
func allowedTools(name string, scope mcpserver.Scope) []string {
	var out []string
	for _, t := range mcpserver.Tools(scope) {
		out = append(out, "mcp__"+name+"__"+t)
	}
	return out
}

// validName reports whether s is a server name Claude Code accepts.
var validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`).MatchString

// Profile returns p wired to the server: each launch For gives an MCP side
// to gets the launch file mcp.json (mode 0600, removed when the launch
// ends) and the flags that flags returns for it, argument templates in
// which {file:mcp.json} is the file's path. Other launches run as p says.
// p's LaunchExtra is replaced. The token is in the file, never on the
// command line.
func (w *Wiring) Profile(p exec.Profile, flags func(l Launch) []string) exec.Profile {
	return w.wire(p, func(l Launch) exec.Extra {
		return exec.Extra{Files: map[string][]byte{configFile: l.Config}, Flags: flags(l)}
	})
}

// wire sets p's LaunchExtra to extra of each launch For gives an MCP
// side to.
func (w *Wiring) wire(p exec.Profile, extra func(l Launch) exec.Extra) exec.Profile {
	p.LaunchExtra = func(ctx context.Context, req engine.StartRequest) (exec.Extra, error) {
		l, ok, err := w.For(ctx, req)
		if err != nil || !ok {
			return exec.Extra{}, err
		}
		return extra(l), nil
	}
	return p
}

// claude returns exec.Claude(o) wired to the server (Profile). A
// report-only turn gets --mcp-config with its configuration and
// --strict-mcp-config (no other MCP server), and --allowedTools names the
// read-only built-in tools, submit_session_handoff and get_handoff_facts.
// A turn of a transfer's target session gets --mcp-config beside the
// user's own MCP servers, and --allowedTools adds read_source_history and
// get_handoff_facts.
func (w *Wiring) claude(o exec.ClaudeOptions) exec.Profile {
	p := exec.Claude(o)
	// The report-only turn's --allowedTools names the report tools beside
	// the read-only ones.
	p.ReportOnly = slices.Clone(p.ReportOnly)
	if i := slices.Index(p.ReportOnly, "--allowedTools"); i >= 0 && i+1 < len(p.ReportOnly) {
		p.ReportOnly[i+1] += "," + strings.Join(allowedTools(w.name, mcpserver.ScopeReport), ",")
	}
	file := "{file:" + configFile + "}"
	return w.Profile(p, func(l Launch) []string {
		if l.Access.Scope == mcpserver.ScopeReport {
			return []string{"--mcp-config", file, "--strict-mcp-config"}
		}
		return []string{"--mcp-config", file, "--allowedTools", strings.Join(l.Tools, ",")}
	})
}

// The environment variables that carry to Codex a turn's token, which it
// sends in the X-Baton-Token header (env_http_headers), and the
// Authorization header of a host whose endpoint requires a bearer token
// (Config.Bearer).
const (
	envToken         = "BATON_MCP_TOKEN"
	envAuthorization = "BATON_MCP_AUTHORIZATION"
)

// codex returns exec.Codex(o) wired to the server over streamable HTTP: a
// wired turn gets the server as configuration overrides (-c
// mcp_servers.<Name>.url, http_headers with the scope, workspace and
// handoff, env_http_headers naming BATON_MCP_TOKEN, enabled_tools with the
// turn's tools, and approval_mode "approve" for each of them: a
// non-interactive turn cannot answer Codex's approval request for a tool
// that is not read-only) and its token in BATON_MCP_TOKEN, never on the command
// line.
// Config.Bridge is not used: Codex reaches the endpoint itself.
func (w *Wiring) codex(o exec.CodexOptions) exec.Profile {
	return w.wire(exec.Codex(o), func(l Launch) exec.Extra {
		a := l.Access
		key := "mcp_servers." + w.name + "."
		var tools, approve []string
		for _, t := range mcpserver.Tools(a.Scope) {
			tools = append(tools, tomlString(t))
			// Codex asks before a tool that is not read-only, and a
			// non-interactive turn has no one to ask.
			approve = append(approve, "-c", key+"tools."+t+`.approval_mode="approve"`)
		}
		// The headers that carry a secret (the turn's token, the host's
		// bearer token) come from the environment, never the arguments.
		var static, fromEnv, env []string
		h := a.Header()
		for _, k := range slices.Sorted(maps.Keys(h)) {
			switch v := h.Get(k); {
			case k == "Authorization":
				fromEnv = append(fromEnv, tomlString(k)+"="+tomlString(envAuthorization))
				env = append(env, envAuthorization+"="+v)
			case v == a.Token.Reveal():
				fromEnv = append(fromEnv, tomlString(k)+"="+tomlString(envToken))
				env = append(env, envToken+"="+v)
			default:
				static = append(static, tomlString(k)+"="+tomlString(v))
			}
		}
		return exec.Extra{
			Flags: append([]string{
				"-c", key + "url=" + tomlString(w.endpoint),
				"-c", key + "http_headers={" + strings.Join(static, ",") + "}",
				"-c", key + "env_http_headers={" + strings.Join(fromEnv, ",") + "}",
				"-c", key + "enabled_tools=[" + strings.Join(tools, ",") + "]",
			}, approve...),
			Env: env,
		}
	})
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
