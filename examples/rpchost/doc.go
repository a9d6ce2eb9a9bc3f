// Command rpchost is baton's reference multi-session host: a process that
// serves scripted agent sessions to several clients over a unix socket,
// speaking the JSON Lines protocol of package host, and that hands over to a
// newer generation of itself without stranding anyone.
//
// # Basics
//
//	rpchost serve -socket PATH [-grace 10m] [-poll 1s] [-sweep 50ms] [-claims DIR] [-hooks all|activity|settle|none]
//	rpchost client -socket PATH -session FILE [-cwd DIR]
//
// serve serves PATH. If nothing answers there it is generation 1. If a live
// host answers, it becomes that host's successor (its generation + 1): it
// binds a side socket next to PATH, serves it, renames it over PATH only if
// PATH is still the entry it probed (same device and inode; otherwise it
// refuses with socket_replaced and exit status 3), waits until PATH answers
// get_protocol_info with its own instance id, and then signals the
// predecessor (SIGUSR1, to the pid the predecessor reported). Once it
// serves it prints exactly one line on stdout:
//
//	{"event":"serving","pid":N,"instanceId":"...","generation":N,"socket":"PATH"}
//
// A host drains (see package host: announce, park each session once
// settled, close, exit) on SIGUSR1, or when its poll (every -poll) of PATH
// sees another entry there; an absent entry counts only after 3
// consecutive polls. It exits 0 once drained, even if clients stay
// connected. SIGINT or SIGTERM shut it down at once instead (sessions
// closed with host_shutdown), removing PATH if it is still its own.
//
// Cross-generation path claims live in -claims (PATH + ".claims" by
// default), shared by every generation serving PATH; pass the same
// directory to hosts on other sockets that may open the same files.
// -hooks removes the scripted runtime's optional capabilities, to see a
// host park without them. Logs are JSON on stderr (zap).
//
// client opens FILE on PATH, sends each line of its standard input as a
// prompt, and prints every record it receives. When its session is
// parked by a handoff it reopens FILE on PATH's new owner (retrying after
// retry_after_ms while the path is still in use) and prints
// {"event":"reattached",...}; prompts typed meanwhile are sent there. At
// the end of its input it closes the session and exits 0.
//
// # Caveats
//
// The scripted engine is a stand-in: "sleep <ms>" runs a turn that long,
// "hold <ms>" keeps the prompt command itself in flight that long, "wake"
// registers a durable wake source, and any other prompt is echoed.
//
// The device-and-inode check and the rename are two system calls: a
// process that replaces PATH between them without taking the takeover
// lock (PATH + ".lock", which every rpchost holds while it probes and
// takes over) is not detected. Paths must fit a unix socket address (108
// bytes on Linux), side socket name included.
package main
