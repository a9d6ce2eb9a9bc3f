// Package agent wires real agent CLIs (Claude Code, Codex, or any CLI a
// profile describes) to baton in one call: New builds, on a store, the
// exec engines of the CLIs asked for, baton's MCP server, the Wiring that
// gives each launch its MCP configuration, and the handoff.Coordinator over
// them, and returns the http.Handler to serve.
//
// # Basics
//
//	ln, err := net.Listen("tcp", "127.0.0.1:0")
//	h, err := agent.New(st, agent.Config{
//		Addr:    ln.Addr().String(),
//		DataDir: dir,
//		Claude:  &exec.ClaudeOptions{},
//	})
//	go http.Serve(ln, h.Handler()) // baton's MCP server at agent.MCPPath, /mcp
//	rec, err := h.Coordinator.Recover(ctx)
//
// A workspace whose configuration names the engine agent.Claude (or
// agent.Codex) then runs its turns through the CLI, and
// h.Coordinator.Create hands its work to a fresh session:
//
//   - A transfer with GenerateSummary resumes the source for a report-only
//     turn whose MCP configuration carries the attempt's generation token:
//     the CLI may call submit_session_handoff and get_handoff_facts, and a
//     report of an earlier attempt is refused.
//   - Every turn of the transfer's target gets a target grant:
//     read_source_history pages through the source's conversation (its
//     transcript in the source's CLI engine, redacted with
//     Config.MCP.Limits) and get_handoff_facts gives the facts.
//   - Any other launch gets no MCP configuration.
//
// The target opens with the Coordinator's briefing: the source's
// conversation read back from its CLI's transcript, bounded and redacted as
// the MCP server redacts, then the report.
//
// Claude Code (Config.Claude) gets the configuration as a launch file
// (--mcp-config, mode 0600, removed when the launch ends: it holds the
// token), --strict-mcp-config on a report-only turn, and --allowedTools
// naming the turn's tools (in print mode the CLI refuses an MCP tool that
// --allowedTools does not name); with Config.Bridge it launches the
// program's stdio bridge (mcpserver.Bridge) instead of reaching Addr.
// Codex (Config.Codex) gets the server as -c overrides, with its token in
// the environment, never on the command line. Any other CLI: a profile of
// Config.Profiles built with Wiring.Profile. Verified with Claude Code
// 2.1.197 and Codex 0.171.0 (package engine/exec/clitest).
//
// # Caveats
//
// Handler serves loopback only: the configurations carry the agents'
// tokens in the clear. Finding the transfer a target session belongs to
// lists the workspace's handoffs at each launch (one store read). A target
// grant lives in memory until Revoke; a new Host mints a new one at the
// next launch. Name the server so that it does not collide with an MCP
// server of the user's own configuration. The exec engines run on Linux
// only. On a store that several processes share, each runs its own Host,
// calls Coordinator.Reconcile instead of Recover, and gives its
// Coordinator a stable instance id (Config.Sessions.InstanceID).
package agent
