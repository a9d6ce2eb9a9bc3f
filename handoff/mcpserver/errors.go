package mcpserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
)

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
