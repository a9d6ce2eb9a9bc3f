// Package multiproc holds tests, and nothing else, of several baton
// coordinator processes on one PostgreSQL database: separate OS processes,
// each a handoff.Coordinator over store/pgstore with the scripted engine of
// engine/enginetest, driven by the test over stdin and stdout.
//
// # Basics
//
// The test binary is also the node program: started with
// BATON_MULTIPROC_NODE=1 it runs one node, which reads one JSON command a
// line on stdin (create a workspace, create a transfer, get, decide, stop,
// reconcile, release a gated step, confirm a held target's readiness) and
// answers one JSON line on stdout. Each node appends what it
// launches and stops, and its coordinator's log, to a file of its own, so
// a test can assert which process launched what, even after killing it.
// The node's engine admits each launch (engine.StartRequest.Admit) before
// the scripted process starts, as an in-process engine with two-phase
// starts does, and logs a refused admission instead of a launch. Its
// store stops inside the Update that records the first launch of a
// workspace named frozen-node..., so that a test can freeze the process
// (SIGSTOP) while it holds that workspace's lock, and its sessions carry
// the node's id as application_name, so that the test finds them on the
// server.
// The tests need a server: they read BATON_PG_URL and skip without it,
// except under CI=true, where a missing server fails them:
//
//	.ci/postgres.sh go test -race ./store/pgstore/multiproc
//
// # Caveats
//
// The nodes use a lease TTL of 2 s, so each test waits a few seconds for a
// lease to lapse, and the frozen node's test for the server to end its
// transaction (an IdleInTransactionTimeout of 5 s); the package's tests
// take about 15 s.
package multiproc
