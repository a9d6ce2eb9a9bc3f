package exec

import (
	"encoding/json"
	"regexp"
	"slices"
	"time"

	"github.com/batonhq/baton/recap"
)

// CodexOptions configure the Codex profile.
type CodexOptions struct {
	// Command is the codex executable; "" means "codex" from PATH.
	Command string
	// ReportConfig are "key=value" configuration overrides (each passed
	// with -c) of a report-only turn, for example the MCP server that
	// offers the report tool. They are templates; since they appear on the
	// command line, pass a token through the environment (Options.Env or
	// Profile.Env), never here.
	ReportConfig []string
	// Config are "key=value" configuration overrides passed with -c to
	// every launch (a model provider, say). Same caveat as ReportConfig.
	Config []string
	// ReadyTimeout bounds the wait for the first completed item; zero
	// means ten minutes.
	ReadyTimeout time.Duration
	// Reconfigure declares the native path: Codex resumes a thread under
	// another model (it warns that this may affect its performance), so
	// the engine answers CanReconfigure with true when this is set.
	Reconfigure bool
}

// Codex returns the profile of the Codex CLI's non-interactive mode
// (https://github.com/openai/codex/blob/main/docs/exec.md):
//
//	codex exec --json --skip-git-repo-check [flags] -- PROMPT
//	codex exec resume --json --skip-git-repo-check [flags] -- THREAD_ID PROMPT
//
// with -m for the model, -c model_reasoning_effort=... and -c
// sandbox_mode=... for effort and permission mode (the resume subcommand
// has no --sandbox flag, so both use -c). A report-only turn runs with -c
// sandbox_mode=read-only plus ReportConfig. The native id is the thread_id
// of the {"type":"thread.started"} line; readiness is the first completed
// agent item (message, reasoning, command, file change, tool call, search,
// plan) or a completed turn; turn.failed refuses the turn; "no rollout
// found" marks a missing thread and "401 Unauthorized" refused
// credentials. "error" lines and error items are not refusals: Codex prints
// them while it retries, and for warnings.
//
// See the package documentation for what of this was checked against the
// installed CLI.
func Codex(o CodexOptions) Profile {
	if o.Command == "" {
		o.Command = "codex"
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 10 * time.Minute
	}
	var base []string
	for _, kv := range o.Config {
		base = append(base, "-c", kv)
	}
	report := []string{"-c", "sandbox_mode=read-only"}
	for _, kv := range o.ReportConfig {
		report = append(report, "-c", kv)
	}
	is := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	var ready []Rule
	for _, t := range []string{"agent_message", "reasoning", "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list"} {
		ready = append(ready, Rule{Fields: is("type", "item.completed", "item.type", t)})
	}
	ready = append(ready, Rule{Fields: is("type", "turn.completed")})
	return Profile{
		Name:            "codex",
		Command:         o.Command,
		Fresh:           slices.Concat([]string{"exec", "--json", "--skip-git-repo-check"}, base, []string{"{flags}", "--", "{prompt}"}),
		Resume:          slices.Concat([]string{"exec", "resume", "--json", "--skip-git-repo-check"}, base, []string{"{flags}", "--", "{native_id}", "{prompt}"}),
		Model:           []string{"-m", "{model}"},
		Effort:          []string{"-c", "model_reasoning_effort={effort}"},
		Permission:      []string{"-c", "sandbox_mode={permission}"},
		ReportOnly:      report,
		Efforts:         []string{"minimal", "low", "medium", "high", "xhigh"},
		PermissionModes: []string{"read-only", "workspace-write", "danger-full-access"},
		Prompt:          PromptArg,
		ReadyTimeout:    o.ReadyTimeout,
		Reconfigure:     o.Reconfigure,
		Output: Output{
			Format:         JSON,
			NativeID:       []Rule{{Fields: is("type", "thread.started"), ID: "thread_id"}},
			Ready:          ready,
			Reject:         []Rule{{Fields: is("type", "turn.failed")}},
			TurnEnd:        []Rule{{Fields: is("type", "turn.completed")}, {Fields: is("type", "turn.failed")}},
			SessionMissing: regexp.MustCompile(`no rollout found`),
			AuthFailed:     regexp.MustCompile(`401 Unauthorized|(?i)not logged in`),
			Events:         codexEvents,
		},
	}
}

type codexLine struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    struct {
		Message string `json:"message"`
	} `json:"error"`
	Item struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Message string `json:"message"`
		Command string `json:"command"`
		Server  string `json:"server"`
		Tool    string `json:"tool"`
	} `json:"item"`
}

// codexEvents turns one --json line into transcript events.
func codexEvents(line []byte) []recap.Event {
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return []recap.Event{{Kind: recap.Note, Text: clip(line, 4096)}}
	}
	switch l.Type {
	case "thread.started":
		return []recap.Event{{Kind: recap.Lifecycle, Text: "codex thread " + l.ThreadID}}
	case "turn.completed":
		return []recap.Event{{Kind: recap.Lifecycle, Text: "turn completed"}}
	case "turn.failed":
		return []recap.Event{{Kind: recap.Lifecycle, Text: "turn failed: " + l.Error.Message}}
	case "error":
		return []recap.Event{{Kind: recap.Note, Text: "error: " + l.Message}}
	case "item.completed":
		switch it := l.Item; it.Type {
		case "agent_message":
			return []recap.Event{{Speaker: recap.Agent, Kind: recap.Message, Text: it.Text}}
		case "reasoning":
			return []recap.Event{{Speaker: recap.Agent, Kind: recap.Note, Text: it.Text}}
		case "error":
			return []recap.Event{{Kind: recap.Note, Text: "error: " + it.Message}}
		case "command_execution":
			return []recap.Event{{Speaker: recap.Agent, Kind: recap.ToolCall, Text: "command " + it.Command}}
		case "mcp_tool_call":
			return []recap.Event{{Speaker: recap.Agent, Kind: recap.ToolCall, Text: "tool " + it.Server + "/" + it.Tool}}
		default:
			return []recap.Event{{Speaker: recap.Agent, Kind: recap.ToolCall, Text: it.Type}}
		}
	}
	return nil
}
