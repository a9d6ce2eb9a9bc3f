// Package host is a multi-session agent host: one long-lived process that
// keeps several agent sessions open for several clients over a local
// socket, and that hands over to a newer generation of itself without
// stranding anyone.
//
// # Basics
//
// A Host drives a Runtime (the seam to whatever runs the agents) and
// serves the JSON Lines protocol of this package over any stream listener,
// a unix socket in practice: Serve accepts connections; each command line
// ({"id", "type", ...}) gets one response line, and session events follow
// as lines without an id. Every session lives at a canonical path (see
// CanonicalPath): opening a path that is already open attaches the
// connection to that session, so one session may be shared by several
// connections and one connection may hold several sessions. A path is
// reserved while its session opens, runs or closes; with Options.ClaimDir
// it is also claimed across processes, so another live generation that
// tries to open it answers session_path_in_use with the owner and
// retry_after_ms 2000. A claim is an flock(2) on a file in that
// directory: it stands exactly as long as its owner process lives.
//
// Drain is the generation handoff. The host stops accepting, writes
// host_superseded {instanceId, generation, successor} to every connection
// once and before anything else changes for it, and then parks each
// session as soon as it is settled: the runtime closes it (releasing its
// files), its claim is released, and only then is session_closed {reason:
// "handoff_parked", sessionPath} written to its connections, so a client
// that reacts by reopening the path on the successor finds it free. A
// connection is closed once it holds no open session; one shared with a
// session still busy stays open and served. When no session and no
// connection is left, Done is closed and Serve returns nil: the process may
// exit, even though clients never disconnected.
//
// A session is busy for parking while an agent turn, a tool or shell
// command, or compaction runs, while queued work waits (engine.Activity's
// Busy), or while a host request for it is in flight. Durable wake
// sources do not hold it: they resume from the session file. The runtime's
// optional capabilities are detected by type assertion on each Session:
// engine.ActivitySnapshotter for the activity, and engine.SettleNotifier
// to park the moment a session settles; without the latter a sweep (every
// Options.Sweep, 50 ms by default) finds settled sessions. Ordinary idle
// eviction (Options.IdleEvict, off by default) keeps the broader predicate:
// there a wake source does keep an unattached session open.
//
// # Protocol
//
// JSON Lines, one object per line. A command is {"id": "c1", "type":
// "open_session", ...its fields}; its response is {"id": "c1", "type":
// "response", "command": "open_session", "success": true, "data": {...}},
// or "success": false with "error" (a stable code) and optional
// "errorData". Events carry a "type" (and "sessionId" where they belong to
// a session) and no "id".
//
//   - open_session {sessionPath, cwd} answers {sessionId, sessionPath,
//     attached}. Paths must be absolute (invalid_path) and are
//     canonicalised (symlinks resolved; for a file that does not exist
//     yet, its directory). A path held by a closing session or by another
//     live generation answers session_path_in_use with errorData {owner,
//     retry_after_ms: 2000}; on a draining host, host_draining.
//   - prompt {sessionId, text}, get_state {sessionId}, abort {sessionId},
//     close_session {sessionId}; a handle the host does not know answers
//     unknown_session, one parked by a drain answers session_closed after
//     its terminal record.
//   - get_protocol_info {} answers {instanceId, generation, pid,
//     capabilities}, capabilities including "multi_session" and
//     "generation_handoff".
//   - Events: agent_start, agent_settled, session_closed {sessionId,
//     reason, sessionPath} with reason client_close, idle_evicted,
//     host_shutdown, handoff_parked or error, and host_superseded
//     {instanceId, generation, successor: {socket} | null}.
//
// A client told handoff_parked reattaches with open_session {sessionPath}
// on the successor, which opens the released file at once.
//
// Client speaks the protocol from the other side, and Scripted is a small
// Runtime for demos and tests ("sleep <ms>", echo). examples/rpchost
// builds a complete host process on both, with the socket takeover a
// successor performs.
//
// # Caveats
//
// No turn is ever cut short by a handoff: the soft grace (Options.Grace,
// 600,000 ms by default) only triggers a rescan and one logged report of
// what still holds the generation. A client that keeps prompting a session
// keeps the old generation alive; that is the price of never dropping
// work.
//
// A runtime without an activity snapshot is trusted to be idle between
// host requests, so its sessions are parked even mid-turn: waiting on a
// signal that never comes would strand the generation forever. Offer
// engine.ActivitySnapshotter if turns outlive the prompt command.
//
// Commands on one connection are handled in order, one at a time; a client
// that wants parallel requests opens more connections. Records queue per
// connection; a client that stops reading is disconnected after
// Options.WriteTimeout or Options.MaxQueuedRecords, never allowed to stall
// the host.
//
// Claims rely on flock(2) and unix sockets: the package targets Unix
// systems with a local file system for the claim directory (flock over
// NFS is not reliable). Taking over the public socket path is the caller's
// business (see examples/rpchost); a unix listener must be told
// SetUnlinkOnClose(false), or closing it would remove the successor's
// socket.
package host
