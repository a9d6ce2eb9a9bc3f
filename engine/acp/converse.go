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

// converse runs the launch's conversation: the session (open), then the
// one turn. Whatever happens, the agent is ended afterwards (endAfterTurn).
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
	sid := p.open(conn)
	if sid == "" {
		return
	}
	p.Mu.Lock()
	if p.StopRequested {
		p.Mu.Unlock()
		return
	}
	p.conn = conn
	p.Mu.Unlock()
	res, err := conn.Prompt(p.ctx, sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: []sdk.ContentBlock{sdk.TextBlock(p.req.Prompt)}})
	p.Mu.Lock()
	defer p.Mu.Unlock()
	switch {
	case err != nil:
		p.turnErr = "session/prompt: " + err.Error()
		select {
		case <-conn.Done():
			// The agent is gone: its exit settles readiness, once the
			// updates it sent before are delivered (the connection hands
			// them over after the disconnect).
		default:
			if !p.StopRequested {
				p.FailReadyLocked(engine.ErrReadyRejected, p.turnErr, refinement(err)...)
			}
		}
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

// open initializes the connection, opens the session (session/new, or
// session/load for a resume) and configures it. It returns the session's
// id, or "" once it failed readiness.
func (p *process) open(conn *sdk.ClientSideConnection) string {
	ctx := p.ctx
	init, err := conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo:      &sdk.Implementation{Name: "baton", Version: "0"},
	})
	if err != nil {
		p.refuse("initialize", err)
		return ""
	}
	if init.AgentInfo != nil {
		p.Mu.Lock()
		p.Seen.Version = init.AgentInfo.Version
		p.Mu.Unlock()
	}
	caps := init.AgentCapabilities
	// A copy, never nil: the protocol wants a list.
	servers := append([]sdk.McpServer{}, p.launch.MCPServers...)
	for _, s := range servers {
		if (s.Http != nil && !caps.McpCapabilities.Http) || (s.Sse != nil && !caps.McpCapabilities.Sse) {
			p.fail("the agent does not take an MCP server over HTTP or SSE (mcpCapabilities)", engine.ErrUnsupportedConfig)
			return ""
		}
	}
	step, sess := "session/new", sdk.NewSessionResponse{}
	if p.req.Mode == engine.Resume {
		if !caps.LoadSession {
			p.fail("the agent does not advertise loadSession: it cannot resume a session (nor write a report)",
				engine.ErrSessionMissing, engine.ErrUnsupportedConfig)
			return ""
		}
		step = "session/load"
		var res sdk.LoadSessionResponse
		res, err = conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(p.req.NativeID), Cwd: p.dir, McpServers: servers})
		sess = sdk.NewSessionResponse{SessionId: sdk.SessionId(p.req.NativeID), ConfigOptions: res.ConfigOptions, Models: res.Models, Modes: res.Modes}
	} else {
		sess, err = conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: p.dir, McpServers: servers})
	}
	if err != nil {
		p.refuse(step, err)
		return ""
	}
	sid := string(sess.SessionId)
	if sid == "" {
		p.fail("the agent named no session id")
		return ""
	}
	p.Mu.Lock()
	p.NativeID = sid
	if sess.Models != nil {
		p.Seen.Model = string(sess.Models.CurrentModelId)
	}
	if o := option(sess.ConfigOptions, sdk.SessionConfigOptionCategoryModel); o != nil {
		p.Seen.Model = string(o.CurrentValue)
	}
	p.Mu.Unlock()
	if err := p.configure(ctx, conn, sess); err != nil {
		p.refuse("configuration", err)
		return ""
	}
	return sid
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
func (p *process) configure(ctx context.Context, conn *sdk.ClientSideConnection, sess sdk.NewSessionResponse) error {
	cfg, sid := p.req.Config.Normalize(), sess.SessionId
	set := func(o *sdk.SessionConfigOptionSelect, v string) error {
		_, err := conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: sid, ConfigId: o.Id, Value: sdk.SessionConfigValueId(v),
		}})
		return err
	}
	if cfg.Model != "" {
		var err error
		switch o := option(sess.ConfigOptions, sdk.SessionConfigOptionCategoryModel); {
		case o != nil:
			err = set(o, cfg.Model)
		case sess.Models != nil:
			_, err = conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: sid, ModelId: sdk.UnstableModelId(cfg.Model)})
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
		o := option(sess.ConfigOptions, sdk.SessionConfigOptionCategoryThoughtLevel)
		if o == nil {
			return baton.Errorf(engine.ErrUnsupportedConfig, "the agent offers no reasoning effort choice")
		}
		if err := set(o, cfg.ReasoningEffort); err != nil {
			return fmt.Errorf("reasoning effort %q: %w", cfg.ReasoningEffort, err)
		}
	}
	mode := sdk.SessionModeId(cfg.PermissionMode)
	if mode == "" || p.req.Turn == transcript.ReportOnly || sess.Modes == nil ||
		!slices.ContainsFunc(sess.Modes.AvailableModes, func(m sdk.SessionMode) bool { return m.Id == mode }) {
		return nil
	}
	if _, err := conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: mode}); err != nil {
		return fmt.Errorf("mode %q: %w", mode, err)
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
	also := refinement(err)
	if step == "session/load" && !errors.Is(err, engine.ErrAuth) {
		also = append(also, engine.ErrSessionMissing)
	}
	p.fail(step+": "+err.Error(), also...)
}

// fail fails readiness with msg, matching also besides
// engine.ErrReadyRejected, unless a stop was asked: then msg is only the
// turn's error, and the exit settles readiness (what failed was likely the
// stop's end of input, not a refusal).
func (p *process) fail(msg string, also ...error) {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	p.turnErr = msg
	if !p.StopRequested {
		p.FailReadyLocked(engine.ErrReadyRejected, msg, also...)
	}
}

// refinement returns the sentinels an ACP error also means: ErrAuth for
// auth_required, ErrSessionMissing for resource_not_found, and those a
// configuration error carries.
func refinement(err error) []error {
	var out []error
	if re, ok := errors.AsType[*sdk.RequestError](err); ok {
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

// client is the engine's side of one launch's connection. It advertises no
// file system and no terminal: the agent uses its own tools, on the
// workspace it was started in, and asks permission for them.
type client struct{ p *process }

// SessionUpdate records a session/update of the turn. Updates before the
// prompt (session/load replays the conversation) are not recorded: the
// engine's own transcript already holds them.
func (c *client) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	p, u := c.p, n.Update
	p.Mu.Lock()
	defer p.Mu.Unlock()
	if p.conn == nil || string(n.SessionId) != p.NativeID {
		return nil
	}
	// The agent's work on the turn (its message, thoughts, plan or tool
	// calls) confirms readiness; the session's own notices (commands,
	// modes, options, usage) do not.
	if u.AgentMessageChunk != nil || u.AgentThoughtChunk != nil || u.ToolCall != nil || u.ToolCallUpdate != nil || u.Plan != nil {
		p.ResolveLocked(p.NativeID)
	}
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.Message, Text: t.Text})
		}
	case u.ToolCall != nil:
		t := u.ToolCall
		p.Tool = t.Status != sdk.ToolCallStatusCompleted && t.Status != sdk.ToolCallStatusFailed
		text := "tool " + string(t.ToolCallId)
		if t.Title != "" {
			text += ": " + t.Title
		}
		if t.Kind != "" {
			text += " (" + string(t.Kind) + ")"
		}
		p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: text})
	case u.ToolCallUpdate != nil:
		if s := u.ToolCallUpdate.Status; s != nil && (*s == sdk.ToolCallStatusCompleted || *s == sdk.ToolCallStatusFailed) {
			p.Tool = false
			p.append(transcript.Event{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: fmt.Sprintf("tool %s %s", u.ToolCallUpdate.ToolCallId, *s)})
		}
	}
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
		if i := slices.IndexFunc(r.Options, func(o sdk.PermissionOption) bool { return o.Kind == k }); i >= 0 {
			return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: r.Options[i].OptionId}}}, nil
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
	mode := req.Config.Normalize().PermissionMode
	switch {
	case kind == sdk.ToolKindRead || kind == sdk.ToolKindSearch || kind == sdk.ToolKindThink || kind == sdk.ToolKindFetch, names(r.ToolCall, allow):
		return true
	case req.Turn == transcript.ReportOnly:
		return false
	case mode == "acceptEdits":
		return kind == sdk.ToolKindEdit || kind == sdk.ToolKindDelete || kind == sdk.ToolKindMove
	}
	return mode == "bypassPermissions"
}

// names reports whether the tool call names a tool of allow: its title is
// one, or ends with one after a separator (an agent titles an MCP call with
// the tool's name, often prefixed by the server's), or its raw input's "tool" or "name" field is
// one.
func names(t sdk.ToolCallUpdate, allow []string) bool {
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
