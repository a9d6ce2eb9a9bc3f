// Package host is a multi-session agent host: one long-lived process that
// keeps several agent sessions open for several clients over a unix
// socket, and hands over to a newer generation of itself (Drain) without
// stranding anyone.
//
// # Basics
//
// New builds a Host of a Runtime, the seam to whatever runs the agents
// (hosttest.NewScripted is one for demos and tests); Serve serves the JSON Lines
// protocol below on a listener; Client speaks it from the other side.
// Every session lives at a canonical path (absolute, symlinks resolved):
// opening an open path attaches the connection to that session, so a
// session may be shared by connections and a connection may hold several
// sessions. With Options.ClaimDir a path is also claimed across processes
// (an flock(2) standing exactly as long as its owner lives), so another
// live generation answers session_path_in_use.
//
// Drain is the generation handoff. The host stops accepting, writes
// host_superseded once to every connection before anything else changes
// for it, then parks each session once it is settled: the runtime closes
// it, its claim is released, and only then session_closed
// {reason: "handoff_parked"} goes to its connections, so a client that
// reopens the path on the successor finds it free. A connection is closed
// once it holds no open session. When nothing is left Serve returns nil and
// the process may exit, even with clients still connected. A session is
// busy for parking while its engine.Activity shows a turn, a tool,
// compaction or queued work, or a host request for it is in flight;
// durable wake sources do not hold it. Activity and Settled methods are
// detected on each Session (see Session); without the latter a sweep finds
// settled sessions.
//
// # Protocol
//
// One JSON object per line. A command {"id", "type", ...fields} gets one
// response {"id", "type": "response", "command", "success", "data"} or, on
// failure, "error" (a code: invalid_command, invalid_path, unknown_session,
// session_path_in_use, host_draining, session_closed, runtime_error,
// host_closed, internal_error; see the Err variables) and "errorData".
// Commands: get_protocol_info (data: Info), open_session {sessionPath,
// cwd} (data: {sessionId, sessionPath, attached}), prompt {sessionId,
// text}, get_state, abort and close_session {sessionId}. Events carry a
// "type" and, for a session, "sessionId": agent_start, agent_settled,
// message, session_closed {reason, sessionPath} (reason client_close,
// idle_evicted, host_shutdown, handoff_parked or error) and
// host_superseded {instanceId, generation, successor: {socket} | null}.
// A command that races a park gets session_closed after the terminal
// record, never unknown_session.
//
// # Caveats
//
// No turn is ever cut short by a handoff: the soft grace (Options.Grace)
// only triggers a rescan and one logged report of what still holds the
// generation, so a client that keeps prompting keeps the old generation
// alive. A runtime without an activity snapshot counts as idle between
// host requests, and is parked even mid-turn. A client that stops reading
// is disconnected (Options.WriteTimeout, MaxQueuedRecords). Claims need
// flock(2) on a local file system. Taking over the public socket is the
// caller's business (examples/rpchost does it); call SetUnlinkOnClose(false)
// on a unix listener, or closing it removes the successor's socket.
package host
