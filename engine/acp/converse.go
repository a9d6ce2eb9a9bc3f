package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/transcript"
)

// JSON-RPC error codes of ACP that readiness errors refine.
const (
	codeAuthRequired     = -32000
	codeResourceNotFound = -32002
)

// converse runs the launch's conversation: initialize, session/new or
// session/load, the configuration, and the one turn. Whatever happens, the
// agent is ended afterwards (endAfterTurn).
func (p *process) converse() {
	defer close(p.convDone)
	defer p.e.reg.WG.Go(p.endAfterTurn)
	// The SDK's connection logs to slog's default logger unless told
	// otherwise, and its reader may log as soon as it runs: hold its input
	// until the logger is set.
	in := &gated{r: p.Stdout, open: make(chan struct{})}
	conn := sdk.NewClientSideConnection(&client{p: p}, p.Stdin, in)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	close(in.open)
	p.Mu.Lock()
	p.conn = conn
	p.Mu.Unlock()
	ctx := p.ctx
	init, err := conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo:      &sdk.Implementation{Name: "baton", Version: "0"},
	})
	if err != nil {
		p.refuse("initialize", err)
		return
	}
	if init.AgentInfo != nil {
		p.Mu.Lock()
		p.Seen.Version = init.AgentInfo.Version
		p.Mu.Unlock()
	}
	caps := init.AgentCapabilities
	servers := p.launch.MCPServers
	if servers == nil {
		servers = []sdk.McpServer{}
	}
	for _, s := range servers {
		if (s.Http != nil && !caps.McpCapabilities.Http) || (s.Sse != nil && !caps.McpCapabilities.Sse) {
			p.refuseWith(engine.ErrUnsupportedConfig, "the agent does not take an MCP server over HTTP or SSE (mcpCapabilities)")
			return
		}
	}
	var (
		sid     string
		options []sdk.SessionConfigOption
		models  *sdk.SessionModelState
		modes   *sdk.SessionModeState
	)
	step := "session/new"
	if p.req.Mode == engine.Resume {
		if !caps.LoadSession {
			p.refuseWith(errors.Join(engine.ErrSessionMissing, engine.ErrUnsupportedConfig),
				"the agent does not advertise loadSession: it cannot resume a session (nor write a report)")
			return
		}
		step = "session/load"
		var res sdk.LoadSessionResponse
		res, err = conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(p.req.NativeID), Cwd: p.dir, McpServers: servers})
		sid, options, models, modes = p.req.NativeID, res.ConfigOptions, res.Models, res.Modes
	} else {
		var res sdk.NewSessionResponse
		res, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: p.dir, McpServers: servers})
		sid, options, models, modes = string(res.SessionId), res.ConfigOptions, res.Models, res.Modes
	}
	if err != nil {
		p.refuse(step, err)
		return
	}
	if sid == "" {
		p.refuseWith(nil, "the agent named no session id")
		return
	}
	p.Mu.Lock()
	p.NativeID = sid
	if models != nil {
		p.Seen.Model = string(models.CurrentModelId)
	}
	if o := option(options, sdk.SessionConfigOptionCategoryModel); o != nil {
		p.Seen.Model = string(o.CurrentValue)
	}
	p.Mu.Unlock()
	if err := p.configure(ctx, conn, sid, options, models, modes); err != nil {
		p.refuse("configuration", err)
		return
	}
	p.Mu.Lock()
	if p.StopRequested {
		p.Mu.Unlock()
		return
	}
	p.prompting = true
	p.Mu.Unlock()
	res, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: []sdk.ContentBlock{sdk.TextBlock(p.req.Prompt)}})
	gone := false
	select {
	case <-conn.Done():
		gone = true
	default:
	}
	p.Mu.Lock()
	defer p.Mu.Unlock()
	switch {
	case err != nil:
		p.turnErr = "session/prompt: " + err.Error()
		if p.StopRequested || gone {
			// The agent is gone: its exit settles readiness, once the
			// updates it sent before are delivered (the connection hands
			// them over after the disconnect).
			return
		}
		p.FailReadyLocked(engine.ErrReadyRejected, p.turnErr, refinement(err)...)
	case res.StopReason == sdk.StopReasonRefusal:
		p.turnErr = "the agent refused the turn"
		p.FailReadyLocked(engine.ErrReadyRejected, p.turnErr)
	case res.StopReason == sdk.StopReasonCancelled:
		p.turnErr = "the turn was cancelled"
	default:
		// An answer that ends the turn accepted it, even without an
		// update before it.
		p.turnOK = true
		p.ResolveLocked(sid)
	}
}

// gated is a reader whose first Read waits until open is closed.
type gated struct {
	r    io.Reader
	open chan struct{}
}

func (g *gated) Read(b []byte) (int, error) {
	<-g.open
	return g.r.Read(b)
}

// configure sets the configuration's model, effort and permission mode on
// the session. A model or effort the agent offers no way to set is an
// error; a permission mode the agent does not offer is left to the
// permission policy alone.
func (p *process) configure(ctx context.Context, conn *sdk.ClientSideConnection, sid string, options []sdk.SessionConfigOption, models *sdk.SessionModelState, modes *sdk.SessionModeState) error {
	cfg := p.req.Config.Normalize()
	set := func(o *sdk.SessionConfigOptionSelect, v string) error {
		_, err := conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: sdk.SessionId(sid), ConfigId: o.Id, Value: sdk.SessionConfigValueId(v),
		}})
		return err
	}
	if cfg.Model != "" {
		var err error
		switch o := option(options, sdk.SessionConfigOptionCategoryModel); {
		case o != nil:
			err = set(o, cfg.Model)
		case models != nil:
			_, err = conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: sdk.SessionId(sid), ModelId: sdk.UnstableModelId(cfg.Model)})
		default:
			return baton.Errorf(engine.ErrUnsupportedConfig, "the agent offers no model choice")
		}
		if err != nil {
			return fmt.Errorf("model %q: %w", cfg.Model, err)
		}
		p.Mu.Lock()
		p.Seen.Model = cfg.Model
		p.Mu.Unlock()
	}
	if cfg.ReasoningEffort != "" {
		o := option(options, sdk.SessionConfigOptionCategoryThoughtLevel)
		if o == nil {
			return baton.Errorf(engine.ErrUnsupportedConfig, "the agent offers no reasoning effort choice")
		}
		if err := set(o, cfg.ReasoningEffort); err != nil {
			return fmt.Errorf("reasoning effort %q: %w", cfg.ReasoningEffort, err)
		}
	}
	if mode := cfg.PermissionMode; mode != "" && p.req.Turn != transcript.ReportOnly && modes != nil {
		for _, m := range modes.AvailableModes {
			if string(m.Id) == mode {
				if _, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sdk.SessionId(sid), ModeId: m.Id}); err != nil {
					return fmt.Errorf("mode %q: %w", mode, err)
				}
			}
		}
	}
	return nil
}

// option returns the select option of category c, nil when none.
func option(options []sdk.SessionConfigOption, c sdk.SessionConfigOptionCategory) *sdk.SessionConfigOptionSelect {
	for _, o := range options {
		if s := o.Select; s != nil && s.Category != nil && *s.Category == c {
			return s
		}
	}
	return nil
}

// refuse fails readiness after a refused request of step.
func (p *process) refuse(step string, err error) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.turnErr = step + ": " + err.Error()
	if p.StopRequested {
		// A stop's end of input, not a refusal: the exit settles it.
		return
	}
	also := refinement(err)
	if step == "session/load" && !errors.Is(err, engine.ErrAuth) {
		also = append(also, engine.ErrSessionMissing)
	}
	p.FailReadyLocked(engine.ErrReadyRejected, p.turnErr, also...)
}

// refuseWith fails readiness for a reason of the engine's own; it also
// matches also (when not nil).
func (p *process) refuseWith(also error, msg string) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.turnErr = msg
	p.FailReadyLocked(engine.ErrReadyRejected, msg, also)
}

// refinement returns the sentinels an ACP error also means: ErrAuth for
// auth_required, ErrSessionMissing for resource_not_found, and those a
// configuration error carries.
func refinement(err error) []error {
	var out []error
	var re *sdk.RequestError
	if errors.As(err, &re) {
		switch re.Code {
		case codeAuthRequired:
			out = append(out, engine.ErrAuth)
		case codeResourceNotFound:
			out = append(out, engine.ErrSessionMissing)
		}
	}
	if errors.Is(err, engine.ErrUnsupportedConfig) {
		out = append(out, engine.ErrUnsupportedConfig)
	}
	return out
}

// turnUpdate reports whether u belongs to the agent's work on the turn (its
// message, thoughts, plan or tool calls), which confirms readiness; the
// session's own notices (commands, modes, options, usage) do not.
func turnUpdate(u sdk.SessionUpdate) bool {
	return u.AgentMessageChunk != nil || u.AgentThoughtChunk != nil || u.ToolCall != nil || u.ToolCallUpdate != nil || u.Plan != nil
}

// update records a session/update of the turn. Updates before the prompt
// (session/load replays the conversation) are not recorded: the engine's
// own transcript already holds them.
func (p *process) update(n sdk.SessionNotification) {
	u := n.Update
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if !p.prompting || string(n.SessionId) != p.NativeID {
		return
	}
	if turnUpdate(u) {
		p.ResolveLocked(p.NativeID)
	}
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: t.Text})
		}
	case u.ToolCall != nil:
		p.Tool = u.ToolCall.Status != sdk.ToolCallStatusCompleted && u.ToolCall.Status != sdk.ToolCallStatusFailed
		p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: toolText(u.ToolCall.Title, string(u.ToolCall.Kind), string(u.ToolCall.ToolCallId))})
	case u.ToolCallUpdate != nil:
		if s := u.ToolCallUpdate.Status; s != nil && (*s == sdk.ToolCallStatusCompleted || *s == sdk.ToolCallStatusFailed) {
			p.Tool = false
			p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: fmt.Sprintf("tool %s %s", u.ToolCallUpdate.ToolCallId, *s)})
		}
	}
}

func toolText(title, kind, id string) string {
	var b strings.Builder
	b.WriteString("tool ")
	b.WriteString(id)
	if title != "" {
		b.WriteString(": " + title)
	}
	if kind != "" {
		b.WriteString(" (" + kind + ")")
	}
	return b.String()
}

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
