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
// first update of its own work (a message or thought chunk, a plan, a tool
// call), or once session/prompt answered. It fails with
// engine.ErrReadyRejected when the agent refuses the initialization, the
// session, its configuration or the turn, or the readiness timeout passes,
// and with engine.ErrExitedBeforeReady when the agent ends first; either
// also matches engine.ErrSessionMissing, engine.ErrAuth or
// engine.ErrUnsupportedConfig when that is why.
//
// One agent process per launch: a process lives for one turn. When
// session/prompt answers, the engine closes the agent's input, waits a
// quarter of a second, then ends its process group (SIGTERM, then SIGKILL
// after Options.StopGrace); Done closes once every process of the launch is
// gone, and the next turn is a new launch that resumes with session/load.
// An agent without loadSession works for fresh sessions only: a resume
// fails readiness with an error matching engine.ErrSessionMissing, and its
// transfers must run without a report. DESIGN.md, beside this file, says
// why and what the engine was verified with.
//
// Stop sends session/cancel while the turn runs, then ends the process
// group as above, and answers engine.Stopped only once all of it is gone.
// Launches are marked as package exec's are (their own process group, the
// parent-death signal, BATON_LAUNCH_ID in every descendant's environment);
// a two-phase start (engine.StartRequest.Admit) holds the agent until it is
// admitted; ReapLaunch stops every process of a launch after a host crash.
//
// The transcript of a session is kept under Options.DataDir in package
// exec's format: the start, the prompt, the agent's message chunks, its tool
// calls and their ends, and the exit, each event marked with the launch's
// turn (a report-only turn's prompt and answer are transcript.ReportOnly). The
// Engine is an engine.Transcriber.
//
// # Configuration and permissions
//
// The configuration's model is set with the session's configuration option
// of category "model" (session/set_config_option), or session/set_model when
// the agent lists models instead; its reasoning effort with the option of
// category "thought_level"; an agent that offers neither fails readiness
// with an error matching engine.ErrUnsupportedConfig. The permission mode
// ("default", "acceptEdits", "plan", "dontAsk" or "bypassPermissions") is set with session/set_mode when the agent
// offers a mode of that id, and decides, with the turn, how the engine
// answers the agent's permission requests: see Permission. The engine
// offers the agent no file system and no terminal of its own.
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
