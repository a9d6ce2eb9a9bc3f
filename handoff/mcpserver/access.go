package mcpserver

import (
	"net/http"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
)

// Scope says which turn an Access belongs to, and so which tools it sees.
type Scope string

const (
	// ScopeReport is a source's report-only turn: submit_session_handoff
	// and get_handoff_facts. Its token is the attempt's generation token.
	ScopeReport Scope = "report"
	// ScopeTarget is a transfer target's turns: read_source_history and
	// get_handoff_facts. Its token is one Server.GrantTarget minted.
	ScopeTarget Scope = "target"
)

// The HTTP headers an Access travels in. The token has a header of its
// own: it is never sent as, or mixed with, an Authorization bearer token
// the host may use for its own API.
const (
	HeaderScope     = "X-Baton-Scope"
	HeaderWorkspace = "X-Baton-Workspace"
	HeaderHandoff   = "X-Baton-Handoff"
	HeaderToken     = "X-Baton-Token"
)

// The environment variables the stdio bridge reads (BridgeFromEnv).
const (
	EnvURL       = "BATON_MCP_URL"
	EnvScope     = "BATON_MCP_SCOPE"
	EnvWorkspace = "BATON_MCP_WORKSPACE"
	EnvHandoff   = "BATON_MCP_HANDOFF"
	EnvToken     = "BATON_MCP_TOKEN"
)

// Access is what one agent turn presents to the server: its scope, the
// handoff it may act on, and a token that proves it. The token is a
// baton.Token, so an Access prints and logs redacted.
type Access struct {
	Scope     Scope
	Workspace baton.WorkspaceID
	Handoff   baton.HandoffID
	Token     baton.Token
}

// ReportAccess is the Access of a report-only turn, built from the
// credentials the engine received in its start request.
func ReportAccess(cred engine.ReportCredentials) Access {
	return Access{Scope: ScopeReport, Workspace: cred.Workspace, Handoff: cred.Handoff, Token: cred.Token}
}

// Header returns the HTTP headers that carry a. It reveals the token: give
// it only to the agent CLI's MCP configuration.
func (a Access) Header() http.Header {
	h := http.Header{}
	h.Set(HeaderScope, string(a.Scope))
	h.Set(HeaderWorkspace, string(a.Workspace))
	h.Set(HeaderHandoff, string(a.Handoff))
	h.Set(HeaderToken, a.Token.Reveal())
	return h
}

// Environ returns a in the "NAME=value" form of the variables the stdio
// bridge reads, with endpoint as EnvURL. It reveals the token.
func (a Access) Environ(endpoint string) []string {
	return []string{
		EnvURL + "=" + endpoint,
		EnvScope + "=" + string(a.Scope),
		EnvWorkspace + "=" + string(a.Workspace),
		EnvHandoff + "=" + string(a.Handoff),
		EnvToken + "=" + a.Token.Reveal(),
	}
}

// valid checks the shape of a, not its token.
func (a Access) valid() error {
	switch {
	case a.Scope != ScopeReport && a.Scope != ScopeTarget:
		return baton.Errorf(ErrAccessDenied, "scope %q is neither %q nor %q", a.Scope, ScopeReport, ScopeTarget)
	case a.Workspace == "" || a.Handoff == "":
		return baton.Errorf(ErrAccessDenied, "the workspace and the handoff must be named")
	case a.Token.IsZero():
		return baton.Errorf(ErrAccessDenied, "no token")
	}
	return nil
}

// AccessFromHeader reads an Access from the headers of a request and
// checks its shape (not its token). Errors: ErrAccessDenied.
func AccessFromHeader(h http.Header) (Access, error) {
	a := Access{
		Scope:     Scope(strings.TrimSpace(h.Get(HeaderScope))),
		Workspace: baton.WorkspaceID(strings.TrimSpace(h.Get(HeaderWorkspace))),
		Handoff:   baton.HandoffID(strings.TrimSpace(h.Get(HeaderHandoff))),
		Token:     baton.ParseToken(strings.TrimSpace(h.Get(HeaderToken))),
	}
	return a, a.valid()
}

// envLookup finds name in environ ("NAME=value"), the last one winning as
// in a shell.
func envLookup(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
