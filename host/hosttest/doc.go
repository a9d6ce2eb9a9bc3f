// Package hosttest helps test a multi-session host (package host)
// from the client's side of its socket: a host served in the test's
// process, connections that record every record they receive, and
// assertions on the order of those records through a generation handoff.
// The tests of host and of examples/rpchost use it, and so can the
// tests of a host built on your own Runtime.
//
// # Basics
//
// Serve runs a host on a unix socket in a short TempDir and closes it at
// the test's cleanup; Dial connects a Conn to any host socket, in-process
// or not. A Conn keeps every record in wire order. Its helpers fail the
// test rather than return errors: Info, Open, Prompt, Abort and State for
// commands that must succeed (Client, with a Context, for those that may
// fail; PathInUse decodes who holds a path), WaitFor to wait for the first
// record that matches (IsType, IsEvent, IsFailure), WaitClosed to wait for
// the host to close the connection.
//
// The order a client sees through a handoff is the contract of package host:
// host_superseded first, then the session's events, then session_closed
// with reason handoff_parked, then the close. WireOrder and Conn.Order
// reduce a connection's records to the Labels that matter for one
// session, and CheckOrder compares them with what is expected:
//
//	hosttest.CheckOrder(t, w.Order(id, "agent_settled", "session_closed"),
//		[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked", hosttest.Closed})
//
// StartStorm keeps commands racing a drain from several goroutines per
// connection; a host must answer them, or close the connection, and never
// with unknown_session. OpenMany, OpenAndPrompt and MeasureDrains are the
// scaffolding of a drain benchmark; Build compiles a host program for
// tests that run it as a real process, with the race detector when the
// test has it. Buffer collects a process's output or a logger's lines.
// NewScripted is a Runtime to host: scripted sessions for demos, tests
// and benchmarks.
//
// # Caveats
//
// Nothing here sleeps to synchronise: waits block on channels, and
// PollUntil polls (every few milliseconds) only states that offer nothing
// to wait on. Every wait is bounded by DefaultTimeout (20 s), which only
// decides how long a broken test takes to fail; there are no timed
// assertions.
//
// The helpers that fail the test call t.Fatalf, so they belong on the
// test's goroutine; Client, Records, Count, IsClosed and Order of a Conn
// may be called from any. A Storm's commands have no deadline: its
// callers stop when the host closes their connections, or at the test's
// cleanup, which closes every Conn.
//
// Socket paths are short because a unix socket path must fit in 108
// bytes; a test that builds its own socket paths should start from
// TempDir, not t.TempDir.
package hosttest
