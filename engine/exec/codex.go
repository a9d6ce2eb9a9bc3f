package exec

import (
	"cmp"
	"encoding/json"
	"regexp"
	"slices"

	"github.com/batonhq/baton/transcript"
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
// them while it retries, and for warnings. The context usage
// (engine.ExitStatus.Usage) comes from the thread's session file, read
// once the child exited: $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-ID.jsonl
// ($HOME/.codex without CODEX_HOME in the child's environment), whose last
// token_count event gives the last request's input_tokens (cached input
// included) and model_context_window; turn.completed's usage sums the
// turn's requests and is not used. Without the file the launch reports
// none.
//
// See the package documentation for what of this was checked against the
// installed CLI.
func Codex(o CodexOptions) Profile {
	o.Command = cmp.Or(o.Command, "codex")
	dashC := func(kvs []string) (flags []string) {
		for _, kv := range kvs {
			flags = append(flags, "-c", kv)
		}
		return flags
	}
	base, report := dashC(o.Config), dashC(append([]string{"sandbox_mode=read-only"}, o.ReportConfig...))
	var ready []Rule
	for _, t := range []string{"agent_message", "reasoning", "command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list"} {
		ready = append(ready, Rule{Fields: fields("type", "item.completed", "item.type", t)})
	}
	ready = append(ready, Rule{Fields: fields("type", "turn.completed")})
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
		Reconfigure:     o.Reconfigure,
		Output: Output{
			JSON:           true,
			NativeID:       []Rule{{Fields: fields("type", "thread.started"), ID: "thread_id"}},
			Ready:          ready,
			Reject:         []Rule{{Fields: fields("type", "turn.failed")}},
			TurnEnd:        []Rule{{Fields: fields("type", "turn.completed")}, {Fields: fields("type", "turn.failed")}},
			SessionMissing: regexp.MustCompile(`no rollout found`),
			AuthFailed:     regexp.MustCompile(`401 Unauthorized|(?i)not logged in`),
			Events:         codexEvents,
			Usage:          func() UsageMeter { return codexMeter{} },
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
func codexEvents(line []byte) []transcript.Event {
	var l codexLine
	if json.Unmarshal(line, &l) != nil {
		return []transcript.Event{{Kind: transcript.Note, Text: clip(line, 4096)}}
	}
	switch l.Type {
	case "thread.started":
		return []transcript.Event{{Kind: transcript.Lifecycle, Text: "codex thread " + l.ThreadID}}
	case "turn.completed":
		return []transcript.Event{{Kind: transcript.Lifecycle, Text: "turn completed"}}
	case "turn.failed":
		return []transcript.Event{{Kind: transcript.Lifecycle, Text: "turn failed: " + l.Error.Message}}
	case "error":
		return []transcript.Event{{Kind: transcript.Note, Text: "error: " + l.Message}}
	case "item.completed":
		switch it := l.Item; it.Type {
		case "agent_message":
			return []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.Message, Text: it.Text}}
		case "reasoning":
			return []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.Note, Text: it.Text}}
		case "error":
			return []transcript.Event{{Kind: transcript.Note, Text: "error: " + it.Message}}
		case "command_execution":
			return []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "command " + it.Command}}
		case "mcp_tool_call":
			return []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "tool " + it.Server + "/" + it.Tool}}
		default:
			return []transcript.Event{{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: it.Type}}
		}
	}
	return nil
}
