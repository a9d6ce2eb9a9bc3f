package exec

import (
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/recap"
)

// ClaudeOptions configure the Claude profile.
type ClaudeOptions struct {
	// Command is the claude executable; "" means "claude" from PATH.
	Command string
	// MCPConfig is the MCP configuration of a report-only turn, a JSON
	// template ({"mcpServers":{...}}) that may use {report_token},
	// {handoff}, {attempt} and {workspace}. It is written to a private
	// file for the launch and passed with --mcp-config and
	// --strict-mcp-config; it never appears on the command line. Empty
	// means report-only turns get no MCP server, so they cannot report.
	MCPConfig string
	// MCPConfigFor, when set, renders the MCP configuration of a
	// report-only turn from its request (its ReportCredentials above all)
	// and takes precedence over MCPConfig; it must name the server
	// MCPServer. The result is written to the same private file.
	MCPConfigFor func(req engine.StartRequest) ([]byte, error)
	// MCPServer is the server's name in MCPConfig; "" means "baton". The
	// report tool is then mcp__<MCPServer>__submit_session_handoff.
	MCPServer string
	// ReportMCPTools are the tools of MCPServer a report-only turn may
	// call, without the mcp__<MCPServer>__ prefix; nil means ReportTool
	// only.
	ReportMCPTools []string
	// ReadOnlyTools are the built-in tools of a report-only turn; nil
	// means Read, Grep and Glob.
	ReadOnlyTools []string
	// ReadyTimeout bounds the wait for the first model response; zero
	// means ten minutes.
	ReadyTimeout time.Duration
}

// ReportTool is the name of the MCP tool a report-only turn submits its
// report with.
const ReportTool = "submit_session_handoff"

// Claude returns the profile of Claude Code's headless mode
// (https://docs.claude.com/en/docs/claude-code/headless, flags at
// https://docs.claude.com/en/docs/claude-code/cli-reference):
//
//	claude -p --output-format stream-json --verbose [flags] -- PROMPT
//	claude -p --output-format stream-json --verbose --resume ID [flags] -- PROMPT
//
// with --model, --effort and --permission-mode for the configuration. A
// report-only turn gets --tools with the read-only tools, --allowedTools
// with those and mcp__<server>__submit_session_handoff (or the
// ReportMCPTools), and the MCP configuration. The native id is the
// session_id of the first line ({"type":"system","subtype":"init",...});
// readiness is the first assistant message or a successful result line; a
// result line with is_error refuses the turn; "No conversation found"
// marks a missing session. The profile is a Reconfigurer: Claude Code resumes a session
// under another --model.
func Claude(o ClaudeOptions) Profile {
	if o.Command == "" {
		o.Command = "claude"
	}
	if o.MCPServer == "" {
		o.MCPServer = "baton"
	}
	tools := o.ReadOnlyTools
	if tools == nil {
		tools = []string{"Read", "Grep", "Glob"}
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 10 * time.Minute
	}
	mcpTools := o.ReportMCPTools
	if mcpTools == nil {
		mcpTools = []string{ReportTool}
	}
	allowed := append([]string{}, tools...)
	for _, t := range mcpTools {
		allowed = append(allowed, "mcp__"+o.MCPServer+"__"+t)
	}
	report := []string{
		"--tools", strings.Join(tools, ","),
		"--allowedTools", strings.Join(allowed, ","),
	}
	var files map[string]string
	var render func(engine.StartRequest) (map[string][]byte, error)
	switch {
	case o.MCPConfigFor != nil:
		report = append(report, "--mcp-config", "{file:mcp.json}", "--strict-mcp-config")
		render = func(req engine.StartRequest) (map[string][]byte, error) {
			if req.Turn != engine.ReportOnly {
				return nil, nil
			}
			b, err := o.MCPConfigFor(req)
			if err != nil {
				return nil, err
			}
			return map[string][]byte{"mcp.json": b}, nil
		}
	case o.MCPConfig != "":
		report = append(report, "--mcp-config", "{file:mcp.json}", "--strict-mcp-config")
		files = map[string]string{"mcp.json": o.MCPConfig}
	}
	head := []string{"-p", "--output-format", "stream-json", "--verbose"}
	is := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	return Profile{
		Name:            "claude",
		Command:         o.Command,
		Fresh:           append(append([]string{}, head...), "{flags}", "--", "{prompt}"),
		Resume:          append(append([]string{}, head...), "--resume", "{native_id}", "{flags}", "--", "{prompt}"),
		Model:           []string{"--model", "{model}"},
		Effort:          []string{"--effort", "{effort}"},
		Permission:      []string{"--permission-mode", "{permission}"},
		ReportOnly:      report,
		ReportFiles:     files,
		LaunchFiles:     render,
		Efforts:         []string{"low", "medium", "high", "xhigh", "max"},
		PermissionModes: []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"},
		Prompt:          PromptArg,
		ReadyTimeout:    o.ReadyTimeout,
		Reconfigure:     true,
		Output: Output{
			Format:         JSON,
			NativeID:       []Rule{{Fields: is("type", "system", "subtype", "init"), ID: "session_id"}},
			Ready:          []Rule{{Fields: is("type", "assistant")}, {Fields: is("type", "result", "is_error", "false")}},
			Reject:         []Rule{{Fields: is("type", "result", "is_error", "true")}},
			TurnEnd:        []Rule{{Fields: is("type", "result")}},
			SessionMissing: regexp.MustCompile(`No conversation found`),
			AuthFailed:     regexp.MustCompile(`(?i)invalid api key|authentication_error|please run /login`),
			Events:         claudeEvents,
		},
	}
}

// claudeLine is what claudeEvents reads of a stream-json line.
type claudeLine struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Model     string `json:"model"`
	Message   struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	IsError bool     `json:"is_error"`
	Errors  []string `json:"errors"`
}

type claudeBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Content json.RawMessage `json:"content"`
}

// claudeEvents turns one stream-json line into transcript events.
func claudeEvents(line []byte) []recap.Event {
	var l claudeLine
	if json.Unmarshal(line, &l) != nil {
		return []recap.Event{{Kind: recap.Note, Text: clip(line, 4096)}}
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			return []recap.Event{{Kind: recap.Lifecycle, Text: "claude session " + l.SessionID + " (model " + l.Model + ")"}}
		}
	case "assistant", "user":
		return claudeContent(l.Type, l.Message.Content)
	case "result":
		text := "turn ended: " + l.Subtype
		if l.IsError {
			text += " (error)"
		}
		if len(l.Errors) > 0 {
			text += ": " + strings.Join(l.Errors, "; ")
		}
		return []recap.Event{{Kind: recap.Lifecycle, Text: text}}
	}
	return nil
}

func claudeContent(role string, raw json.RawMessage) []recap.Event {
	speaker := recap.Agent
	if role == "user" {
		speaker = recap.User
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []recap.Event{{Speaker: speaker, Kind: recap.Message, Text: s}}
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var evs []recap.Event
	for _, b := range blocks {
		switch b.Type {
		case "text":
			evs = append(evs, recap.Event{Speaker: speaker, Kind: recap.Message, Text: b.Text})
		case "tool_use":
			evs = append(evs, recap.Event{Speaker: speaker, Kind: recap.ToolCall, Text: "tool " + b.Name + " " + clip(b.Input, 2048)})
		case "tool_result":
			evs = append(evs, recap.Event{Speaker: speaker, Kind: recap.ToolCall, Text: "result " + clip(b.Content, 2048)})
		}
	}
	return evs
}
