package exec

import (
	"cmp"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/batonhq/baton/transcript"
)

// ClaudeOptions configure the Claude profile.
type ClaudeOptions struct {
	// Command is the claude executable; "" means "claude" from PATH.
	Command string
	// ReadOnlyTools are the built-in tools of a report-only turn (--tools
	// and --allowedTools); nil means Read, Grep and Glob. The MCP server a
	// report-only turn reports through, and its tools, come from a launch
	// hook (Profile.LaunchExtra): package agent adds them (Config.Claude).
	ReadOnlyTools []string
}

// Claude returns the profile of Claude Code's headless mode
// (https://docs.claude.com/en/docs/claude-code/headless, flags at
// https://docs.claude.com/en/docs/claude-code/cli-reference):
//
//	claude -p --output-format stream-json --verbose [flags] -- PROMPT
//	claude -p --output-format stream-json --verbose --resume ID [flags] -- PROMPT
//
// with --model, --effort and --permission-mode for the configuration. A
// report-only turn gets --tools and --allowedTools with the read-only
// tools. The native id is the
// session_id of the first line ({"type":"system","subtype":"init",...}),
// whose model and claude_code_version fields say which model the CLI
// really sends to the API and its version (engine.Actual: Claude Code
// 2.1.197 launched with --model claude-opus-4-1 names claude-opus-4-8
// there, and sends that);
// readiness is the first assistant message or a successful result line; a
// result line with is_error refuses the turn; "No conversation found"
// marks a missing session. The profile is a Reconfigurer: Claude Code resumes a session
// under another --model. The context usage (engine.ExitStatus.Usage) is
// the usage of the last assistant message of the main conversation
// (input_tokens + cache_creation_input_tokens + cache_read_input_tokens;
// a subagent's messages, which name a parent_tool_use_id, are not the
// session's context), and the window the result line's modelUsage names
// for that message's model (contextWindow).
func Claude(o ClaudeOptions) Profile {
	o.Command = cmp.Or(o.Command, "claude")
	tools := o.ReadOnlyTools
	if tools == nil {
		tools = []string{"Read", "Grep", "Glob"}
	}
	report := []string{"--tools", strings.Join(tools, ","), "--allowedTools", strings.Join(tools, ",")}
	head := []string{"-p", "--output-format", "stream-json", "--verbose"}
	return Profile{
		Name:            "claude",
		Command:         o.Command,
		Fresh:           append(append([]string{}, head...), "{flags}", "--", "{prompt}"),
		Resume:          append(append([]string{}, head...), "--resume", "{native_id}", "{flags}", "--", "{prompt}"),
		Model:           []string{"--model", "{model}"},
		Effort:          []string{"--effort", "{effort}"},
		Permission:      []string{"--permission-mode", "{permission}"},
		ReportOnly:      report,
		Efforts:         []string{"low", "medium", "high", "xhigh", "max"},
		PermissionModes: []string{"acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"},
		Reconfigure:     true,
		Output: Output{
			JSON:           true,
			NativeID:       []Rule{{Fields: fields("type", "system", "subtype", "init"), ID: "session_id"}},
			Model:          []Rule{{Fields: fields("type", "system", "subtype", "init"), ID: "model"}},
			Version:        []Rule{{Fields: fields("type", "system", "subtype", "init"), ID: "claude_code_version"}},
			Ready:          []Rule{{Fields: fields("type", "assistant")}, {Fields: fields("type", "result", "is_error", "false")}},
			Reject:         []Rule{{Fields: fields("type", "result", "is_error", "true")}},
			TurnEnd:        []Rule{{Fields: fields("type", "result")}},
			SessionMissing: regexp.MustCompile(`No conversation found`),
			AuthFailed:     regexp.MustCompile(`(?i)invalid api key|authentication_error|please run /login`),
			Events:         claudeEvents,
			Usage:          func() UsageMeter { return &claudeMeter{} },
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
func claudeEvents(line []byte) []transcript.Event {
	var l claudeLine
	if json.Unmarshal(line, &l) != nil {
		return []transcript.Event{{Kind: transcript.Note, Text: clip(line, 4096)}}
	}
	switch l.Type {
	case "system":
		if l.Subtype == "init" {
			return []transcript.Event{{Kind: transcript.Lifecycle, Text: "claude session " + l.SessionID + " (model " + l.Model + ")"}}
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
		return []transcript.Event{{Kind: transcript.Lifecycle, Text: text}}
	}
	return nil
}

func claudeContent(role string, raw json.RawMessage) []transcript.Event {
	speaker := transcript.Agent
	if role == "user" {
		speaker = transcript.User
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []transcript.Event{{Speaker: speaker, Kind: transcript.Message, Text: s}}
	}
	var blocks []claudeBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	var evs []transcript.Event
	for _, b := range blocks {
		switch b.Type {
		case "text":
			evs = append(evs, transcript.Event{Speaker: speaker, Kind: transcript.Message, Text: b.Text})
		case "tool_use":
			evs = append(evs, transcript.Event{Speaker: speaker, Kind: transcript.ToolCall, Text: "tool " + b.Name + " " + clip(b.Input, 2048)})
		case "tool_result":
			evs = append(evs, transcript.Event{Speaker: speaker, Kind: transcript.ToolCall, Text: "result " + clip(b.Content, 2048)})
		}
	}
	return evs
}
