package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/internal/workspace"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
)

// Tool names; Tools lists those of a scope.
const (
	toolSubmit = "submit_session_handoff"
	// ToolHistory is the name of the tool that reads the source
	// conversation (for handoff.Briefing.HistoryTool).
	ToolHistory = "read_source_history"
	toolFacts   = "get_handoff_facts"
)

// defaultName is the server's default name in an MCP configuration; Claude
// Code calls its tools mcp__baton__<tool>.
const defaultName = "baton"

// Config configures a Server.
type Config struct {
	// Coordinator receives the reports and knows the handoffs. Required.
	Coordinator *handoff.Coordinator
	// History opens the source conversation of a handoff for
	// read_source_history. Nil: the tool refuses with ErrNoHistory.
	History func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (History, error)
	// Facts gathers the facts of a handoff for get_handoff_facts. Nil:
	// facts.Gather in the workspace's root, since the source session
	// started, with FactsOptions.
	Facts        func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (facts.Facts, error)
	FactsOptions facts.Options
	// Limits gives the Secrets and Markers applied to the history and the
	// facts, as the briefing applies them. Token shapes are always
	// redacted.
	Limits recap.Limits
	// Name is the server's name in its MCP implementation info ("baton" when empty).
	Name string
	// Version is the server's version in its implementation info.
	Version string
	// Logger logs refusals (never a token). Default zap.NewNop().
	Logger *zap.Logger
}

// Server is baton's MCP server. It lives in the host process, beside the
// Coordinator, and serves agent CLIs over streamable HTTP (Handler), the
// stdio bridge (which forwards to Handler).
// Safe for concurrent use.
type Server struct {
	cfg  Config
	co   *handoff.Coordinator
	reds sync.Pool // cleaner
	http *mcp.StreamableHTTPHandler

	mu     sync.Mutex
	grants map[baton.TokenHash]grant
}

// grant is what a target token may read.
type grant struct {
	ws baton.WorkspaceID
	id baton.HandoffID
}

// cleaner is a recap.Cleaner: it redacts and strips a text the tools show.
type cleaner = func(dst []byte, text string) []byte

// New returns a Server. Errors: ErrBadConfig without a Coordinator.
func New(cfg Config) (*Server, error) {
	if cfg.Coordinator == nil {
		return nil, baton.Errorf(ErrBadConfig, "no Coordinator")
	}
	cfg.Name, cfg.Version = cmp.Or(cfg.Name, defaultName), cmp.Or(cfg.Version, "v1")
	cfg.Logger = cmp.Or(cfg.Logger, zap.NewNop())
	s := &Server{co: cfg.Coordinator, grants: map[baton.TokenHash]grant{}}
	if cfg.Facts == nil {
		cfg.Facts = s.gather
	}
	s.cfg = cfg
	s.reds.New = func() any { return recap.Cleaner(cfg.Limits) }
	fromHeader := func(req *mcp.CallToolRequest) (Access, error) {
		if req.Extra == nil || req.Extra.Header == nil {
			return Access{}, baton.Errorf(errAccessDenied, "no access headers")
		}
		return accessFromHeader(req.Extra.Header)
	}
	servers := map[Scope]*mcp.Server{
		ScopeReport: s.mcpServer(ScopeReport, fromHeader),
		ScopeTarget: s.mcpServer(ScopeTarget, fromHeader),
	}
	s.http = mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		return servers[Scope(r.Header.Get(headerScope))]
	}, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return s, nil
}

// Handler returns the streamable HTTP endpoint for the host to mount on a
// loopback listener. Every request carries its Access in the X-Baton-*
// headers (Access.Header); a request whose headers are missing or
// malformed is answered 400 before any MCP processing. Tokens are checked
// by each tool call, which refuses with a tool error. The endpoint is
// stateless: no MCP session outlives a request.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := accessFromHeader(r.Header); err != nil {
			http.Error(w, err.Error()+" (send the X-Baton-Scope, X-Baton-Workspace, X-Baton-Handoff and X-Baton-Token headers)", http.StatusBadRequest)
			return
		}
		s.http.ServeHTTP(w, r)
	})
}

// GrantTarget mints the Access of a transfer target's turns: it may read
// handoff id's source conversation and facts until Revoke. Grants live in
// this Server's memory only: after a host restart, grant again before the
// target resumes.
func (s *Server) GrantTarget(ws baton.WorkspaceID, id baton.HandoffID) Access {
	tok := baton.NewToken()
	s.mu.Lock()
	s.grants[tok.Hash()] = grant{ws: ws, id: id}
	s.mu.Unlock()
	return Access{Scope: ScopeTarget, Workspace: ws, Handoff: id, Token: tok}
}

// Revoke withdraws a target grant; calls with its token are refused from
// then on. Revoking twice, or a report Access, does nothing.
func (s *Server) Revoke(a Access) {
	s.mu.Lock()
	delete(s.grants, a.Token.Hash())
	s.mu.Unlock()
}

// authorize checks a's token for its scope: a target grant in memory, or
// a report token against the handoff's current generation token (the
// Coordinator checks it again, atomically, when a report is submitted).
func (s *Server) authorize(ctx context.Context, a Access) error {
	if err := a.valid(); err != nil {
		return err
	}
	if a.Scope == ScopeTarget {
		s.mu.Lock()
		g, ok := s.grants[a.Token.Hash()]
		s.mu.Unlock()
		if !ok || g.ws != a.Workspace || g.id != a.Handoff {
			return baton.Errorf(errAccessDenied, "no grant for this token and handoff")
		}
		return nil
	}
	return workspace.Of(s.co.Sessions()).(interface{ Store() store.Store }).Store().View(ctx, func(tx store.Tx) error {
		h, err := tx.GetHandoff(a.Handoff)
		switch {
		case errors.Is(err, store.ErrNotFound) || err == nil && h.Workspace != a.Workspace:
			return baton.Errorf(handoff.ErrNotFound, "%s", a.Handoff)
		case err != nil:
			return err
		case h.State != store.StateGenerating || h.StopRequested:
			return handoff.ErrGenerationInactive
		case !h.GenerationToken.Matches(a.Token):
			return handoff.ErrTokenRejected
		}
		return nil
	})
}

// Errors of the server. Each is a *baton.Error: match it with errors.Is.
// A tool never returns them as protocol errors: a refused call is a tool
// result with IsError set, whose text starts with the baton error code.
var (
	// errAccessDenied: the call's Access is malformed, names another
	// handoff, or its token is not valid for it (a report token of an
	// earlier attempt, a target grant that was revoked or never made).
	errAccessDenied = baton.NewError(baton.ErrConflict, "mcpserver: access denied")
	// errBadArguments: the tool's arguments are malformed (not an object,
	// an unknown direction, a cursor this server did not make).
	errBadArguments = baton.NewError(baton.ErrInvalid, "mcpserver: invalid tool arguments")
	// ErrNoHistory: the host gave the server no History for this handoff,
	// or the handoff's Share keeps the source conversation on the machine.
	ErrNoHistory = baton.NewError(baton.ErrUnsupported, "mcpserver: the source conversation is not available")
	// ErrBadConfig: New or Bridge got an unusable configuration.
	ErrBadConfig = baton.NewError(baton.ErrInvalid, "mcpserver: invalid configuration")
)

// refusal is the structured content of a refused tool call.
type refusal struct {
	// Code is baton's error code (the Code of baton.ErrInvalid, baton.ErrConflict, ...).
	Code string `json:"code"`
	// Error is the error's message.
	Error string `json:"error"`
	// Action is a sentence telling the agent what to do now.
	Action string `json:"action"`
}

// refused logs a refusal of tool and turns err into a tool error result
// an agent can act on.
func (s *Server) refused(tool string, a Access, err error) *mcp.CallToolResult {
	s.cfg.Logger.Info("mcp tool call refused", zap.String("tool", tool), zap.String("scope", string(a.Scope)),
		zap.String("workspace", string(a.Workspace)), zap.String("handoff", string(a.Handoff)),
		zap.String("code", baton.ErrorCode(err)), zap.Error(err))
	r := refusal{Code: baton.ErrorCode(err), Error: err.Error(), Action: action(err)}
	text := fmt.Sprintf("Refused (baton error %s): %s. %s", r.Code, strings.TrimSuffix(r.Error, "."), r.Action)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: r}
}

// action is the sentence that tells the agent what to do after err.
func action(err error) string {
	switch {
	case errors.Is(err, handoff.ErrInvalidRequest):
		return fmt.Sprintf("Write a report of 1 to %d characters (after trimming) and call submit_session_handoff again.", baton.MaxReportChars)
	case errors.Is(err, handoff.ErrReportConflict):
		return "A different report is already stored for this handoff and it is final: do not submit again; end your turn."
	case errors.Is(err, handoff.ErrGenerationInactive):
		return "This handoff no longer accepts a report (the report turn ended, timed out or was cancelled): do not retry; end your turn."
	case errors.Is(err, handoff.ErrTokenRejected), errors.Is(err, errAccessDenied):
		return "These credentials are not valid for this handoff attempt (an earlier attempt's, or revoked): do not retry; end your turn and tell the user."
	case errors.Is(err, handoff.ErrNotFound):
		return "No such handoff in this workspace: the MCP configuration is wrong; do not retry; tell the user."
	case errors.Is(err, errBadArguments):
		return "Fix the arguments as the tool's description says and call it again."
	case errors.Is(err, ErrNoHistory):
		return "The previous conversation cannot be read here: work from the briefing and the working tree."
	case baton.ErrorCode(err) == baton.ErrUnavailable.Code:
		return "The host could not do it right now: call the tool again in a moment with the same arguments."
	}
	return "Do not retry; tell the user what happened."
}

// redactFacts returns f with every recorded text (paths, subjects, names,
// commands, notes) redacted as the briefing redacts it, so that neither the
// Markdown nor the structured facts carry a secret the briefing would not.
func redactFacts(f facts.Facts, clean cleaner) facts.Facts {
	r := func(s *string) {
		if *s != "" {
			*s = string(clean(nil, *s))
		}
	}
	g := &f.Git
	r(&g.Branch)
	r(&g.Upstream)
	g.Uncommitted = redactEach(g.Uncommitted, func(x *facts.File) { r(&x.Path); r(&x.From) })
	g.Commits = redactEach(g.Commits, func(x *facts.Commit) { r(&x.Subject); r(&x.Author) })
	g.Diff = redactEach(g.Diff, func(x *facts.DiffFile) { r(&x.Path) })
	f.Checks = redactEach(f.Checks, func(x *facts.Check) { r(&x.Command); r(&x.Summary) })
	f.Notes = redactEach(f.Notes, r)
	return f
}

// redactEach returns a copy of s (nil when s is empty) with r applied to
// every element: the caller's facts are not modified.
func redactEach[T any](s []T, r func(*T)) []T {
	s = append([]T(nil), s...)
	for i := range s {
		r(&s[i])
	}
	return s
}
