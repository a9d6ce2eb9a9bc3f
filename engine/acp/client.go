package acp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// client is the engine's side of one launch's connection. It advertises no
// file system and no terminal: the agent uses its own tools, on the
// workspace it was started in, and asks permission for them.
type client struct{ p *process }

var _ sdk.Client = (*client)(nil)

func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.p.update(n)
	return nil
}

func (c *client) RequestPermission(_ context.Context, r sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	p := c.p
	allow := p.e.opts.Permission(p.req, p.launch.Allow, r)
	kinds := []sdk.PermissionOptionKind{sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways}
	if allow {
		kinds = []sdk.PermissionOptionKind{sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways}
	}
	for _, k := range kinds {
		for _, o := range r.Options {
			if o.Kind == k {
				return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
			}
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}

func (c *client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}

func (c *client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}

func (c *client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}

func (c *client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}

func (c *client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}

func (c *client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// Permission is the package's permission policy (Options.Permission's
// default). It allows a tool call when:
//
//   - its kind is read-only (read, search, think, fetch), in any turn;
//   - it names one of allow (Launch.Allow: baton's MCP tools the turn may
//     use), matched against the end of the tool call's title or the name
//     its raw input gives, in any turn;
//   - in a normal turn whose permission mode is acceptEdits, its kind is
//     an edit (edit, delete, move);
//   - in a normal turn whose permission mode is bypassPermissions, always.
//
// Anything else is refused: a report-only turn may only read and call the
// tools allow names, whatever the permission mode, and modes default,
// plan and dontAsk run unattended, so nobody is there to say yes.
func Permission(req engine.StartRequest, allow []string, r sdk.RequestPermissionRequest) bool {
	var kind sdk.ToolKind
	if r.ToolCall.Kind != nil {
		kind = *r.ToolCall.Kind
	}
	switch kind {
	case sdk.ToolKindRead, sdk.ToolKindSearch, sdk.ToolKindThink, sdk.ToolKindFetch:
		return true
	}
	if names(r.ToolCall, allow) {
		return true
	}
	if req.Turn == transcript.ReportOnly {
		return false
	}
	switch req.Config.Normalize().PermissionMode {
	case "bypassPermissions":
		return true
	case "acceptEdits":
		return kind == sdk.ToolKindEdit || kind == sdk.ToolKindDelete || kind == sdk.ToolKindMove
	}
	return false
}

// names reports whether the tool call names a tool of allow: its title is
// one, or ends with one after a separator (an agent titles an MCP call with
// the tool's name, often prefixed by the server's), or its raw input's "tool" or "name" field is
// one.
func names(t sdk.ToolCallUpdate, allow []string) bool {
	if len(allow) == 0 {
		return false
	}
	if t.Title != nil {
		title := strings.TrimSpace(*t.Title)
		for _, a := range allow {
			// The whole title, or its end after a separator
			// (mcp__baton__submit_session_handoff, baton/...).
			if rest, ok := strings.CutSuffix(title, a); a != "" && ok && (rest == "" || strings.ContainsAny(rest[len(rest)-1:], "_/:. ")) {
				return true
			}
		}
	}
	var in struct {
		Tool string `json:"tool"`
		Name string `json:"name"`
	}
	if b, err := json.Marshal(t.RawInput); err == nil && json.Unmarshal(b, &in) == nil {
		return (in.Tool != "" && slices.Contains(allow, in.Tool)) || (in.Name != "" && slices.Contains(allow, in.Name))
	}
	return false
}
