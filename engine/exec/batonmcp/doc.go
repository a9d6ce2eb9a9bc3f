// Package batonmcp wires an exec engine to baton's MCP server
// (package mcpserver): each launch of the agent CLI gets an MCP
// configuration that points it at the host's server with the credentials
// of its turn, and the flags that let it call exactly the tools of that
// turn. It also gives the server the source conversation of a transfer,
// read from the exec engine's transcript.
//
// # Basics
//
// The host builds, in this order: a Wiring (New, with the URL at which it
// serves the server's Handler on loopback), the exec engine on its
// profile (Wiring.Claude, Wiring.Codex, or Wiring.Profile for any CLI), the
// handoff.Coordinator on that engine, the mcpserver.Server on the
// Coordinator with History(co, engine) as its Config.History, and then
// Wiring.Attach(co, server).
//
// A report-only turn (the source writing its report) gets an Access of the
// report scope built from its start request's ReportCredentials: the
// attempt's generation token, so a report of an earlier attempt is
// refused. With Claude Code it runs with --mcp-config and
// --strict-mcp-config, and --allowedTools names the read-only built-in
// tools, mcp__baton__submit_session_handoff and
// mcp__baton__get_handoff_facts. A turn of a transfer's target session
// (its first turn and every later one) gets a target grant of the server
// (Server.GrantTarget), and --allowedTools adds
// mcp__baton__read_source_history and mcp__baton__get_handoff_facts; its
// MCP configuration comes beside the user's own servers. Any other launch
// gets no MCP configuration.
//
// Wiring.Codex does the same for the Codex CLI with configuration
// overrides: the server's URL and headers, enabled_tools with the turn's
// tools, and approval_mode "approve" for each of them (a non-interactive
// turn cannot answer Codex's approval request for a tool that is not
// read-only); the token travels in the environment variable EnvToken,
// which env_http_headers names.
//
// The configuration is a launch file (mode 0600, removed when the launch
// ends), never an argument: it holds the token. With Options.Bridge the
// CLI launches the host's stdio bridge subcommand with the Access in its
// environment instead of reaching the endpoint itself.
//
// TranscriptHistory reads an exec transcript as an mcpserver.History
// through its offset index, so a page costs the same at the start and at
// the end of a long conversation.
//
// # Caveats
//
// Finding the transfer a target session belongs to lists the workspace's
// handoffs at each launch of a session (one store read). A target grant
// lives in the Wiring and the Server until Revoke, and a new Wiring (after
// a host restart) mints a new one at the next launch. Name the server so
// that it does not collide with an MCP server of the user's own
// configuration: Claude Code would see two servers of one name.
package batonmcp
