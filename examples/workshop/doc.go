// Command workshop is baton's reference server: an HTTP API, a live event
// stream and a web page in front of a handoff.Coordinator and a
// session.Service, on the embedded badger store. It runs with no LLM (the
// demo engine scripts every path by model name), so a newcomer can drive a
// whole session transfer with curl or a browser, and a tool builder can copy
// what it does.
//
// # Basics
//
//	go run ./examples/workshop
//
// serves on 127.0.0.1:8080 with its data in ./baton-data. Flags (and BATON_*
// environment variables) choose -addr, -data, -store and -log-level; see
// -help. The API is JSON under /api/; errors are {"error", "code"} on
// every route, with baton's error codes mapped to HTTP statuses in one
// table (errors.go), and a 5xx names only the request id, its details
// going to the log. /healthz answers while the process runs, /readyz once
// it has reconciled the store and until it begins shutting down, while
// the store can persist (503 with the reason otherwise). Bodies must
// arrive within -body-timeout; at most -max-streams event streams are
// open, and a reader stalled past -stream-write-timeout is dropped.
//
// The demo engine's behaviour follows the model name of a configuration:
// fail-ready (readiness rejected; on a transfer, on its first attempt only,
// so that a retry completes), exit-early (the first turn ends before
// readiness), no-report (a report-only turn submits nothing), hang-stop
// (Stop is never confirmed), slow-ready (readiness takes -demo-slow-ready);
// any other name is an ordinary agent whose report-only turn submits a
// Markdown report with its attempt's token, through the coordinator's
// SubmitReport as any agent would. Each ordinary demo turn reports 20,000
// more tokens in context, of a 200,000-token window (model no-window
// names no window).
//
// A workspace's context-pressure policy (GET and PUT
// /api/workspaces/{ws}/pressure: threshold, target, report; on the
// workspace's JSON; -pressure-threshold for the workspaces created without
// one) hands it over by itself once a turn settles with its context window
// filled to the threshold (handoff.Coordinator.SetPressure). Such a
// transfer's reason (store.HandoffReason) names the trigger and the usage
// that fired it, and the page shows it on the transfer and in the list of
// the workspace's transfers, beside each session's context bar.
//
// # Caveats
//
// It is an example: one process serves one store. A restart reconciles:
// transfers that were pending come back interrupted and nothing is
// relaunched until someone retries, skips or cancels. While a transfer is
// pending, every mutating route of its workspace except the transfer's own
// and stop answers 409 workspace-busy.
//
// The server launches agents, so it must not be driven by whatever web page
// its user visits: it listens on loopback by default, serves only allowed
// Host names (DNS rebinding), accepts mutating requests only with JSON
// bodies and, when an Origin header is present, only from its own origin.
// Beyond loopback it requires BATON_TOKEN as a bearer token on /api/ and
// refuses to start without one; the page itself then cannot call the API
// (it sends no token) and is meant for loopback use.
//
// The MCP endpoint agent CLIs call during a transfer is mounted at /mcp
// (package handoff/mcpserver); its per-attempt token travels in its own
// header, never in Authorization. -engine claude (or codex) adds the agent
// CLI, run as a child process per turn (package engine/exec), wired by
// package agent: its report-only turn submits its report through that
// endpoint, and a transfer's target reads the source's conversation
// there.
//
// With -store postgres://... (package store/pgstore) several replicas serve
// one database, each with its own -instance id. A replica reconciles at
// start and at each -lease-ttl, interrupting only the transfers of
// replicas whose lease lapsed; a decision or stop sent to any replica
// reaches the one that drives the transfer.
package main
