// Package acp is an engine.Engine over any agent that speaks the Agent
// Client Protocol (ACP: JSON-RPC on the agent's standard input and output),
// on the Go ACP SDK (github.com/coder/acp-go-sdk): Gemini CLI and OpenCode
// natively, Claude Code and Codex through Zed's adapters.
//
// # Basics
//
// Options name the agent's command line, its environment and the data
// directory of the transcripts; New builds an Engine on them. Each Start
// spawns the command in the workspace root (engine.StartRequest.Dir), and
// the launch's own goroutine talks to it: initialize, then session/new for
// a fresh start or session/load for a resume (only when the agent
// advertises loadSession), each with the launch's MCP servers
// (Launch.MCPServers, from Options.Launch: baton's report server for a
// report-only turn, with the turn's credentials), then the configuration
// (see below), then session/prompt with the start's prompt.
//
// Ready returns the session id once the agent named it and sent the turn's
// first session/update of its own work (a message or thought chunk, a plan,
// a tool call): session/prompt answers only at the turn's end, and an
// answer that ends the turn confirms it too. Updates before the prompt
// (session/load replays the conversation) are not recorded. Ready fails
// with engine.ErrReadyRejected when the agent refuses the initialization,
// the session, its configuration or the turn (or the readiness timeout
// passes), and with engine.ErrExitedBeforeReady when the agent ends first;
// either also matches engine.ErrSessionMissing (session/load of an unknown
// session, or a resume on an agent without loadSession), engine.ErrAuth
// (the agent answered auth_required) or engine.ErrUnsupportedConfig when
// that is why.
//
// One agent process per launch: a process lives for one turn. When
// session/prompt answers, the engine closes the agent's input, gives it a
// quarter of a second to exit (an ACP agent is a server: neither adapter
// exits at the end of its input), then SIGTERM, then SIGKILL to its process
// group after Options.StopGrace, and Done closes once every process of the launch is gone. The
// next turn is a new launch that resumes the session with session/load. So
// a Process is exactly one running agent, as with package exec, and the
// rule that at most one engine process runs in a workspace, and the
// current-session rule, hold as they do for exec: baton's reservation
// orders the launches, and no agent outlives the turn it was launched for.
// An agent that keeps no sessions across processes (no loadSession) works
// for fresh sessions only: a resume fails readiness with an error that
// matches engine.ErrSessionMissing, so baton's continuation planner starts
// a fresh session with a briefing instead, and such an agent cannot write a
// transfer's report (the report-only turn resumes the source): its
// transfers must run without one.
//
// Stop sends session/cancel while the turn runs (or closes the agent's
// input before it does), sends SIGTERM to the process group once the agent
// answered the prompt (or Options.StopGrace passed), SIGKILL after the
// grace again, and answers engine.Stopped only once all of it is gone.
// Launches are marked as package exec's are (their own process group, the
// parent-death signal, BATON_LAUNCH_ID=<launch id> in the environment of
// every descendant), a two-phase start (engine.StartRequest.Admit) holds
// the agent in a shell until it is admitted, and ReapLaunch finds and stops
// every process of a launch after its host crashed.
//
// The transcript of a session is kept under Options.DataDir in package
// exec's format: the start, the prompt, the agent's message chunks, its tool
// calls and their ends, and the exit, each event marked with the launch's
// turn (a report-only turn's prompt and answer are engine.ReportOnly). The
// Engine is an engine.Transcriber.
//
// # Configuration and permissions
//
// The configuration's model is set with the session's configuration option
// of category "model" (session/set_config_option), or session/set_model when
// the agent lists models instead; its reasoning effort with the option of
// category "thought_level"; an agent that offers neither fails readiness
// with an error matching engine.ErrUnsupportedConfig. The permission mode
// (one of PermissionModes) is set with session/set_mode when the agent
// offers a mode of that id, and decides, with the turn, how the engine
// answers the agent's permission requests: see Permission. The engine
// offers the agent no file system and no terminal of its own.
//
// # Verified with
//
// The protocol as the Go ACP SDK v0.13.0 speaks it (protocol version 1),
// and, against the scripted model APIs of package engine/exec/clitest:
//
//   - Claude Code's adapter, npm @zed-industries/claude-agent-acp 0.23.1
//     (on @anthropic-ai/claude-agent-sdk 0.2.83 and the Claude Code it
//     bundles): a fresh session, a resume by session/load whose request
//     carries the conversation, a confirmed stop in the middle of a turn, a
//     transfer from engine/exec's Claude profile to it and back with a
//     report submitted over baton's MCP server (an HTTP server in
//     session/load's mcpServers, its tools allowed by the permission
//     policy), and a host SIGKILLed in the middle of a turn, whose orphan
//     (the Claude Code process under the adapter) Recover reaps.
//   - Codex's adapter, npm @zed-industries/codex-acp 0.16.0 (its Linux x64
//     binary, configured with -c overrides): a fresh session and a resume.
//
// Checked only against the protocol's documentation: session/set_model and
// the configuration options of categories "model" and "thought_level" with
// a real agent (the scripted agent of the tests has them; the adapters
// were run without a model or effort), SSE MCP servers, and the agents
// that speak ACP natively (Gemini CLI, OpenCode).
//
// # Caveats
//
// Linux only, like package exec (process groups, the parent-death signal
// and /proc). An Exit's code is the turn's, not the agent server's (which
// the engine ends itself): 0 when session/prompt answered with a stop
// reason that ends a turn (end_turn, max_tokens, max_turn_requests) and no
// stop was asked; otherwise the agent's exit code (1 when it exited 0, -1
// after a signal), with Err saying why unless Stop asked. The engine knows what an agent advertises only once
// it runs, so Validate checks the configuration's fields alone.
package acp
