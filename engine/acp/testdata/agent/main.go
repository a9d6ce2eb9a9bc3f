// Command agent is a scripted ACP agent for the tests of package acp: it
// speaks the protocol on its standard input and output with the Go ACP SDK,
// keeps its sessions in $ACPAGENT_DIR (so that session/load in a later
// process finds them), and does what the prompt's first word says:
//
//	hang      a message chunk, then wait for session/cancel ("cancelled")
//	stubborn  a message chunk, then ignore cancel, SIGTERM and the end of input
//	stall     no update; wait for session/cancel
//	crash     a message chunk, then exit 3 in the middle of the turn
//	refuse    answer "refusal" with no update
//	silent    answer "end_turn" with no update
//	fork      start a grandchild (sleep) that outlives the agent, then reply
//	tool:K:T  ask permission for a tool call of kind K titled T, and reply
//	          "allowed" or "rejected"
//	mcp       reply with the MCP servers of the session (name, URL, headers)
//	config    reply with the model, effort and mode the client set
//	anything else: reply "echo: <prompt>"
//
// Flags: -noload (no loadSession capability), -auth (session/new and
// session/load answer auth_required), -nomodels (no model option), -stay
// (do not exit at the end of input).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	sdk "github.com/coder/acp-go-sdk"
)

var (
	noLoad   = flag.Bool("noload", false, "advertise no loadSession")
	auth     = flag.Bool("auth", false, "answer auth_required")
	noModels = flag.Bool("nomodels", false, "offer no model option")
	stay     = flag.Bool("stay", false, "ignore the end of input")
	stubborn atomic.Bool
)

type session struct {
	ID      string   `json:"id"`
	History []string `json:"history"`
	MCP     []string `json:"mcp"`
	Model   string   `json:"model"`
	Effort  string   `json:"effort"`
	Mode    string   `json:"mode"`
}

type agent struct {
	conn *sdk.AgentSideConnection
	dir  string
	mu   sync.Mutex
	live map[string]*session
}

func (a *agent) path(id string) string { return filepath.Join(a.dir, id+".json") }

func (a *agent) save(s *session) {
	b, _ := json.Marshal(s)
	_ = os.WriteFile(a.path(s.ID), b, 0o600)
}

func (a *agent) get(id string) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.live[string(id)]
}

func mcpNames(servers []sdk.McpServer) []string {
	var out []string
	for _, s := range servers {
		switch {
		case s.Http != nil:
			h := ""
			for _, kv := range s.Http.Headers {
				h += " " + kv.Name + "=" + kv.Value
			}
			out = append(out, "http "+s.Http.Name+" "+s.Http.Url+h)
		case s.Stdio != nil:
			out = append(out, "stdio "+s.Stdio.Name+" "+s.Stdio.Command)
		}
	}
	return out
}

func values(vs ...string) sdk.SessionConfigSelectOptions {
	var u sdk.SessionConfigSelectOptionsUngrouped
	for _, v := range vs {
		u = append(u, sdk.SessionConfigSelectOption{Name: v, Value: sdk.SessionConfigValueId(v)})
	}
	return sdk.SessionConfigSelectOptions{Ungrouped: &u}
}

func options(s *session) []sdk.SessionConfigOption {
	model, effort := sdk.SessionConfigOptionCategoryModel, sdk.SessionConfigOptionCategoryThoughtLevel
	opts := []sdk.SessionConfigOption{{Select: &sdk.SessionConfigOptionSelect{Id: "effort", Name: "Effort", Category: &effort, CurrentValue: sdk.SessionConfigValueId(s.Effort), Type: "select", Options: values("low", "high")}}}
	if !*noModels {
		opts = append(opts, sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{Id: "model", Name: "Model", Category: &model, CurrentValue: sdk.SessionConfigValueId(s.Model), Type: "select", Options: values("scripted-default", "m1")}})
	}
	return opts
}

func modes(s *session) *sdk.SessionModeState {
	return &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(s.Mode), AvailableModes: []sdk.SessionMode{{Id: "default", Name: "Default"}, {Id: "acceptEdits", Name: "Accept edits"}}}
}

func (a *agent) Initialize(context.Context, sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	return sdk.InitializeResponse{
		ProtocolVersion:   sdk.ProtocolVersionNumber,
		AgentInfo:         &sdk.Implementation{Name: "scripted-agent", Version: "1.2.3"},
		AgentCapabilities: sdk.AgentCapabilities{LoadSession: !*noLoad, McpCapabilities: sdk.McpCapabilities{Http: true}},
	}, nil
}

func (a *agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(_ context.Context, r sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if *auth {
		return sdk.NewSessionResponse{}, sdk.NewAuthRequired(nil)
	}
	var b [6]byte
	f, _ := os.Open("/dev/urandom")
	f.Read(b[:])
	f.Close()
	s := &session{ID: fmt.Sprintf("sess-%x", b), MCP: mcpNames(r.McpServers), Model: "scripted-default", Mode: "default"}
	a.mu.Lock()
	a.live[s.ID] = s
	a.mu.Unlock()
	a.save(s)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.ID), ConfigOptions: options(s), Modes: modes(s)}, nil
}

func (a *agent) LoadSession(ctx context.Context, r sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if *auth {
		return sdk.LoadSessionResponse{}, sdk.NewAuthRequired(nil)
	}
	b, err := os.ReadFile(a.path(string(r.SessionId)))
	if err != nil {
		return sdk.LoadSessionResponse{}, &sdk.RequestError{Code: -32002, Message: "Resource not found: " + string(r.SessionId)}
	}
	var s session
	if err := json.Unmarshal(b, &s); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	s.MCP = mcpNames(r.McpServers)
	// Replay the conversation, as the protocol asks.
	for _, h := range s.History {
		_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: r.SessionId, Update: sdk.UpdateAgentMessageText("replayed: " + h)})
	}
	a.mu.Lock()
	a.live[s.ID] = &s
	a.mu.Unlock()
	return sdk.LoadSessionResponse{ConfigOptions: options(&s), Modes: modes(&s)}, nil
}

func (a *agent) SetSessionConfigOption(_ context.Context, r sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	v := r.ValueId
	s := a.get(string(v.SessionId))
	if v == nil || s == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams("no such session")
	}
	switch v.ConfigId {
	case "model":
		if v.Value == "unknown-model" {
			return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams("unknown model")
		}
		s.Model = string(v.Value)
	case "effort":
		s.Effort = string(v.Value)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: options(s)}, nil
}

func (a *agent) SetSessionMode(_ context.Context, r sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	if s := a.get(string(r.SessionId)); s != nil {
		s.Mode = string(r.ModeId)
	}
	return sdk.SetSessionModeResponse{}, nil
}

func (a *agent) say(ctx context.Context, sid sdk.SessionId, text string) {
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateAgentMessageText(text)})
}

func (a *agent) Prompt(ctx context.Context, r sdk.PromptRequest) (sdk.PromptResponse, error) {
	s := a.get(string(r.SessionId))
	if s == nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams("no such session")
	}
	var text string
	for _, b := range r.Prompt {
		if b.Text != nil {
			text += b.Text.Text
		}
	}
	word, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	reply := "echo: " + text
	sid := r.SessionId
	// A notice of the session's own first: it does not confirm readiness.
	_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: []sdk.AvailableCommand{}}}})
	switch {
	case word == "hang":
		a.say(ctx, sid, "working")
		<-ctx.Done()
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case word == "stubborn":
		signal.Ignore(syscall.SIGTERM)
		stubborn.Store(true)
		a.say(ctx, sid, "working")
		select {}
	case word == "stall":
		<-ctx.Done()
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case word == "crash":
		a.say(ctx, sid, "working")
		os.Exit(3)
	case word == "refuse":
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
	case word == "silent":
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case word == "fork":
		cmd := osexec.Command("sleep", "600")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return sdk.PromptResponse{}, err
		}
		_ = os.WriteFile(filepath.Join(a.dir, "grandchild"), []byte(fmt.Sprint(cmd.Process.Pid)), 0o600)
		reply = "forked"
	case strings.HasPrefix(word, "tool:"):
		parts := strings.SplitN(word, ":", 3)
		kind := sdk.ToolKind(parts[1])
		title := parts[2]
		_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.StartToolCall("call-1", title, sdk.WithStartKind(kind), sdk.WithStartStatus(sdk.ToolCallStatusPending))})
		res, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sid, ToolCall: sdk.ToolCallUpdate{ToolCallId: "call-1", Title: &title, Kind: &kind},
			Options: []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"}, {Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject", OptionId: "reject"}}})
		if err != nil {
			return sdk.PromptResponse{}, err
		}
		reply = "rejected"
		if res.Outcome.Selected != nil && res.Outcome.Selected.OptionId == "allow" {
			reply = "allowed"
		}
		_ = a.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sid, Update: sdk.UpdateToolCall("call-1", sdk.WithUpdateStatus(sdk.ToolCallStatusCompleted))})
	case word == "mcp":
		reply = "mcp: " + strings.Join(s.MCP, "; ")
	case word == "config":
		reply = fmt.Sprintf("model=%s effort=%s mode=%s", s.Model, s.Effort, s.Mode)
	}
	a.say(ctx, sid, reply)
	s.History = append(s.History, text, reply)
	a.save(s)
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func (a *agent) Cancel(context.Context, sdk.CancelNotification) error { return nil }

func (a *agent) CloseSession(context.Context, sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, nil
}

func (a *agent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, errors.New("not supported")
}

func main() {
	flag.Parse()
	a := &agent{dir: os.Getenv("ACPAGENT_DIR"), live: map[string]*session{}}
	if a.dir == "" {
		fmt.Fprintln(os.Stderr, "agent: ACPAGENT_DIR is not set")
		os.Exit(2)
	}
	a.conn = sdk.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	a.conn.SetLogger(slog.New(slog.DiscardHandler))
	<-a.conn.Done()
	if *stay || stubborn.Load() {
		select {}
	}
}
