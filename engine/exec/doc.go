// Package exec is an engine.Engine that runs a real agent CLI (Claude Code,
// Codex, or any program described by a Profile) as a child process per
// launch, and can find and stop every process of a launch after the host
// that spawned it crashed.
//
// # Basics
//
// A Profile says how to build the command line of a fresh start, a resume
// by native id and a report-only turn (argument templates with
// placeholders such as {prompt}, {native_id} and {model}), which
// configurations the CLI accepts, how the prompt is passed (argument,
// standard input or a private file), and how the child's standard output
// is read: line rules (JSON fields or a pattern) recognise the line that
// carries the native session id, the line that confirms readiness, the line
// that refuses the first turn and the line that ends a turn. Claude and
// Codex return the profiles of the two CLIs; New builds an Engine on one.
//
// Start spawns the child in Dir (the workspace root) and returns at once.
// Ready blocks until a readiness line arrives with a native id
// (engine.ErrReadyRejected after a refusal or the profile's readiness
// timeout, engine.ErrExitedBeforeReady when the child ends first; either
// also matches engine.ErrSessionMissing or engine.ErrAuth when the child
// said so). A child that exits cleanly before readiness reports the native
// id it printed in Exit().NativeID.
//
// Each launch runs in its own process group, with the parent-death signal
// set (Options.DeathSignal, SIGKILL by default) and the environment entry
// BATON_LAUNCH_ID=<launch id> (LaunchEnv), which every descendant
// inherits. Stop sends SIGTERM to the group, SIGKILL after
// Options.StopGrace, waits for the child, and kills whatever else of the
// launch still runs; it answers engine.Stopped only once all of it is
// gone. When the child exits by itself, what it left running is killed
// before Done closes, so a launch never outlives its Process.
//
// A start with engine.StartRequest.Admit is two-phase: the child first runs
// /bin/sh, which waits on a pipe the host holds, already in the launch's
// process group and carrying LaunchEnv (ReapLaunch finds and kills it like
// any process of the launch); Start then calls Admit, and only when Admit
// returns nil does the host release the shell, which replaces itself with
// the agent's command (same pid, group and environment). A refused
// admission kills the held child and Start returns once it is gone: the
// agent never ran. A host that dies while its child is held closes the
// pipe, and the child ends without running the agent. The transcript
// records the start at the release, not at the spawn.
//
// ReapLaunch (engine.Reaper) is for the launches of a host that died: it
// scans /proc for processes whose environment carries the launch id, plus
// the process groups they are in, signals each only while its pid still
// has the start time it was found with (a reused pid is never mistaken for
// the agent), and confirms them gone; a zombie counts as gone.
//
// Every line the child prints becomes transcript events (the profile's
// Output.Events; Claude and Codex map messages, tool calls and lifecycle
// lines to recap events), appended with the prompt and lifecycle events to
// the session's transcript under Options.DataDir: JSON lines beside an
// offset index, synced at each turn end and when the child exits.
// OpenTranscript reads one (Len, Events) at the same cost at the start and
// at the end of a large file; Tail serves a running session's newest
// events from memory.
//
// # Profiles
//
// Claude follows Claude Code's headless mode
// (https://docs.claude.com/en/docs/claude-code/headless). Every flag it
// uses (-p, --output-format stream-json, --verbose, --resume, --model,
// --effort, --permission-mode, --tools, --allowedTools, --mcp-config,
// --strict-mcp-config, and "--" before the prompt) was run against the
// installed CLI (2.1.197), and its output lines in testdata/claude were
// produced by that CLI against a scripted Messages API. The native id is
// the init line's session_id; a resume keeps it, also under another
// --model, so the engine is an engine.Reconfigurer for this profile. A
// report-only turn was run against an MCP server: the CLI calls the report
// tool with the credentials of the launch's MCP configuration, and refuses
// the model's call of any other tool. Package batonmcp wires the profile
// to baton's MCP server (package mcpserver); a transfer with a report, and
// a target turn reading the source's history, were run with the CLI
// through it (the CLI refuses an MCP tool that --allowedTools does not
// name in ordinary turns too). Profile.LaunchExtra gives such per-launch flags and files to
// any profile.
//
// Codex follows the Codex CLI's non-interactive mode
// (https://github.com/openai/codex/blob/main/docs/exec.md). Checked against
// the installed CLI (0.171.0), driven through this profile against a
// scripted Responses API (a model provider set with -c): every flag and
// subcommand the profile uses (exec, exec resume, --json,
// --skip-git-repo-check, -m, -c, "--" before the thread id and prompt);
// the values of sandbox_mode (the CLI rejects others); the lines
// thread.started (a resume keeps the thread id, also under another -m),
// item.completed with an agent_message, turn.completed, turn.failed, the
// "error" lines and error items it prints while it retries or warns (they
// are neither readiness nor refusal), "401 Unauthorized" for refused
// credentials, and "no rollout found" for a resume of an unknown thread;
// and a confirmed stop in the middle of a turn. Checked only against the
// documentation: the item types other than agent_message and error that
// count as readiness (reasoning, command_execution, file_change,
// mcp_tool_call, web_search, todo_list), the accepted values of
// model_reasoning_effort (the CLI passes any value on to the API). A
// transfer with a report over baton's MCP server was run with the CLI
// through package batonmcp, which passes the server as -c overrides and
// the token in the environment (Extra.Env); a hand-written ReportConfig
// was not run. Codex warns when a thread is resumed under
// another model, so the Codex profile declares the native path only when
// CodexOptions.Reconfigure asks for it.
//
// # Caveats
//
// The engine runs on Linux only (process groups, the parent-death signal
// and /proc); elsewhere Start fails with engine.ErrUnsupportedConfig. A
// two-phase start needs /bin/sh (any POSIX shell there); without it such a
// Start fails with an EUNAVAILABLE error and nothing runs. The agent then
// sees its command's resolved path as its argv[0].
//
// The parent-death signal fires when the host's thread that spawned the
// child exits, not only when the host does; the Go runtime does not end
// its threads unless a goroutine locked to one exits, so do not call Start
// from a goroutine that holds runtime.LockOSThread and then returns.
//
// A descendant that both clears its environment and leaves the launch's
// process group escapes ReapLaunch; so does a process of another user
// whose environment cannot be read. An orphan's death is confirmed by
// polling /proc (there is no parent to wait for).
//
// One writer per transcript: an Engine locks each transcript it writes,
// and keeps the last eight sessions' open between their launches, so two
// Engines on one data directory must not run launches of one session
// (the second gets ErrTranscriptBusy until the first lets go or closes).
//
// Arguments are visible to every user of the machine: a profile must pass
// secrets (the report token) in a launch file or the environment, never in
// argv. Transcripts hold the conversation in clear text, mode 0600.
package exec
