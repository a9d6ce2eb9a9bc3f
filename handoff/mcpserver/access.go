package mcpserver

import (
	"net/http"
	"slices"
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
	headerScope     = "X-Baton-Scope"
	headerWorkspace = "X-Baton-Workspace"
	headerHandoff   = "X-Baton-Handoff"
	headerToken     = "X-Baton-Token"
)

// The environment variables the stdio bridge reads (Bridge).
const (
	envURL       = "BATON_MCP_URL"
	envScope     = "BATON_MCP_SCOPE"
	envWorkspace = "BATON_MCP_WORKSPACE"
	envHandoff   = "BATON_MCP_HANDOFF"
	envToken     = "BATON_MCP_TOKEN"
	// envBearer carries Access.Bearer, the host's own bearer token, when
	// its endpoint requires one.
	envBearer = "BATON_MCP_BEARER"
)

// Access is what one agent turn presents to the server: its scope, the
// handoff it may act on, and a token that proves it. The token is a
// baton.Token, so an Access prints and logs redacted.
type Access struct {
	Scope     Scope
	Workspace baton.WorkspaceID
	Handoff   baton.HandoffID
	Token     baton.Token
	// Bearer is the host's own bearer token, when the host serves its MCP
	// endpoint behind one (sent as "Authorization: Bearer"); zero when it
	// does not. It is no credential of the turn: the tools check Token.
	Bearer baton.Token
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
	h.Set(headerScope, string(a.Scope))
	h.Set(headerWorkspace, string(a.Workspace))
	h.Set(headerHandoff, string(a.Handoff))
	h.Set(headerToken, a.Token.Reveal())
	if !a.Bearer.IsZero() {
		h.Set("Authorization", "Bearer "+a.Bearer.Reveal())
	}
	return h
}

// Environ returns a in the "NAME=value" form of the variables the stdio
// bridge reads, with endpoint as BATON_MCP_URL. It reveals the token.
func (a Access) Environ(endpoint string) []string {
	env := []string{
		envURL + "=" + endpoint,
		envScope + "=" + string(a.Scope),
		envWorkspace + "=" + string(a.Workspace),
		envHandoff + "=" + string(a.Handoff),
		envToken + "=" + a.Token.Reveal(),
	}
	if !a.Bearer.IsZero() {
		env = append(env, envBearer+"="+a.Bearer.Reveal())
	}
	return env
}

// valid checks the shape of a, not its token.
func (a Access) valid() error {
	switch {
	case a.Scope != ScopeReport && a.Scope != ScopeTarget:
		return baton.Errorf(errAccessDenied, "scope %q is neither %q nor %q", a.Scope, ScopeReport, ScopeTarget)
	case a.Workspace == "" || a.Handoff == "":
		return baton.Errorf(errAccessDenied, "the workspace and the handoff must be named")
	case a.Token.IsZero():
		return baton.Errorf(errAccessDenied, "no token")
	}
	return nil
}

// accessFromHeader reads an Access from the headers of a request and
// checks its shape (not its token). Errors: errAccessDenied.
func accessFromHeader(h http.Header) (Access, error) {
	a := accessFrom(func(k string) string { return strings.TrimSpace(h.Get(k)) }, headerScope, headerWorkspace, headerHandoff, headerToken)
	return a, a.valid()
}

// accessFrom reads an Access from the values get gives the names of its
// scope, workspace, handoff and token.
func accessFrom(get func(string) string, scope, ws, id, token string) Access {
	return Access{Scope: Scope(get(scope)), Workspace: baton.WorkspaceID(get(ws)), Handoff: baton.HandoffID(get(id)), Token: baton.ParseToken(get(token))}
}

// envLookup finds name in environ ("NAME=value"), the last one winning as
// in a shell.
func envLookup(environ []string, name string) string {
	for _, kv := range slices.Backward(environ) {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
