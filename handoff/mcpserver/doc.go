// Package mcpserver is baton's MCP server: the tools a real agent CLI
// (Claude Code, Codex, ...) calls during a session transfer. It lives in
// the host process, beside the handoff.Coordinator that owns the store, and
// is built on the official Go MCP SDK
// (https://github.com/modelcontextprotocol/go-sdk).
//
// # Basics
//
// Three tools, each offered to one or both scopes of an Access:
//
//	submit_session_handoff(report)   report scope: the source's report-only turn
//	read_source_history(cursor?, direction?, maxChars?, reportTurns?)
//	                                  target scope: the new session's turns
//	get_handoff_facts()              both scopes
//
// submit_session_handoff hands the report to Coordinator.SubmitReport: 1 to
// 24,000 characters after trimming, accepted only from the current
// attempt's generation token while the handoff is generating, never twice
// (the same text again is accepted as a retry; a different one is refused),
// and refused once the turn has ended. read_source_history pages through
// the source conversation (a History the host provides): oldest first or newest first, an opaque cursor, at most
// maxChars characters of text per page, every message redacted and
// stripped of markers exactly as package recap's conversation replay does
// it, with the same Config.Limits. The report-only turn (the prompt that
// asked the source for its report, and its answer) is not conversation and
// is left out unless reportTurns asks for it; no message runs across its
// borders. It refuses (ErrNoHistory) when the handoff's Share keeps the
// conversation on the machine. get_handoff_facts returns the facts of
// package facts (git state, checks run), redacted the same way, as
// Markdown and as structured content.
//
// Every refusal is a tool result with IsError set, never a protocol error:
// its text reads "Refused (baton error CODE): MESSAGE. ACTION", where CODE
// is baton's error code and ACTION a sentence the agent can act on ("do not
// retry; end your turn"); its structured content holds the same three.
//
// An Access names its scope, the workspace and the handoff, and carries a
// token. A report Access is the engine's ReportCredentials (ReportAccess):
// its token is the attempt's generation token, so a token of an earlier
// attempt is refused. A target Access is minted by GrantTarget and lives in
// the Server's memory until Revoke. Over HTTP an Access travels in four
// headers of its own (X-Baton-Scope, X-Baton-Workspace, X-Baton-Handoff,
// X-Baton-Token), never in Authorization, so it never mixes with a bearer
// token of the host's own API; the scope header chooses the tools listed.
//
// # Transports
//
// Handler is a stateless streamable HTTP endpoint for the host to mount on
// a loopback listener. Bridge is the stdio side for CLIs that launch their
// MCP servers as processes: a host calls it from a subcommand of its own
// binary (or ships cmd/baton-mcp-bridge), the CLI launches it with the
// Access in its environment (Access.Environ, read back by Bridge),
// and it forwards every message to Handler. Package agent writes either
// form into the CLIs' MCP configurations.
//
// # Caveats
//
// A page of history costs O(page budget + the messages it touches): the
// History must seek by index (an offset-indexed transcript), and one
// message is read whole (up to 4 MiB, with a line counting the bytes left
// unread). Redaction sees
// whole messages (chunks joined as the replay joins them), so a secret
// split across streamed chunks is still redacted; a secret split across two
// messages is not, as in the briefing.
//
// Target grants are in memory: after a restart of the host, grant again.
// The server stores nothing itself (the Coordinator stores the report).
// The bridge forwards messages one at a time and keeps no session.
package mcpserver
