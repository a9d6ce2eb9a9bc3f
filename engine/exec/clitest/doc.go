// Package clitest is a test kit for tools that drive the real agent CLIs
// (Claude Code, Codex) through package exec: scripted model APIs on
// 127.0.0.1, the isolated environment each CLI needs to talk to them and
// nothing else, and the helpers that find the CLI executables. A tool
// builder tests their own tool against the real CLIs in CI with it; baton's
// own end-to-end tests use it.
//
// # Basics
//
// NewMessages starts a scripted Anthropic Messages API (what Claude Code
// talks to), NewResponses a scripted OpenAI Responses API (what Codex
// talks to). Each answers every request the CLI makes with the Reply of
// a Script, a function of the decoded Request: text, tool calls, a reply
// held until a Gate opens (or the CLI goes away), or a failure (an HTTP
// error or a stream that fails), each reporting the token usage the
// Reply says (Usage: what a test of an engine's context usage chooses). Both record what they were asked
// (Requests), so a test checks what reached the model: the prompt, the
// tools offered, the results of the tool calls.
//
//	bin := clitest.ClaudeBin(t) // skipped without the CLI, fatal under CI=true
//	api := clitest.NewMessages(t, func(r clitest.Request) clitest.Reply {
//		return clitest.Text("Hello from the scripted API")
//	})
//	e := clitest.NewEngine(t, exec.Options{
//		Profile: exec.Claude(exec.ClaudeOptions{Command: bin}),
//		DataDir: t.TempDir(),
//		Env:     api.ClaudeEnv(clitest.Home(t)),
//	})
//
// # The isolated environment
//
// A CLI run by a test must not read the developer's configuration, log in
// with their account, or reach any host but the scripted API. The
// environments of this package are whole (the child inherits nothing
// else), with PATH kept so that the CLI finds node:
//
//   - Claude Code (ClaudeEnv): HOME set to a fresh directory (Claude Code
//     keeps its settings, sessions and credentials under $HOME/.claude and
//     $HOME/.claude.json), ANTHROPIC_BASE_URL set to the scripted API,
//     ANTHROPIC_API_KEY set to a test key (so it never asks for a login),
//     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 (no update check, error
//     reporting or other traffic beside the API) and DISABLE_TELEMETRY=1.
//   - Codex (CodexEnv and CodexConfig): HOME and CODEX_HOME set to a fresh
//     directory (Codex keeps its config.toml, auth.json and session
//     rollouts under $CODEX_HOME), OPENAI_API_KEY set to a test key, and
//     the model provider given as -c overrides (exec.CodexOptions.Config),
//     or in $CODEX_HOME/config.toml (WriteCodexConfig) for a program that
//     passes no overrides: a provider named "scripted" streaming from the
//     scripted API's Responses endpoint, with its retries off so that a
//     failure shows at once. Codex reaches nothing else when the model provider is its
//     own.
//
// # Caveats
//
// The kit and baton's profiles are verified with Claude Code ClaudeVersion
// and Codex CodexVersion: a newer CLI may change its flags, its output
// lines or the requests it sends, so upgrade deliberately, with a test run.
//
// Nothing here talks to a network other than 127.0.0.1. The scripted APIs
// stream the events the CLIs read, not every field a real API sends;
// a Script that needs more writes its own handler with SSE and the event
// writers (MessageStart, MessageText, MessageToolUse, ResponseCreated, ...).
// Main calls os.Exit. The exec engine, and so NewEngine, runs on Linux
// only.
package clitest
