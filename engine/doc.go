// Package engine defines how baton drives agent engines: an Engine starts or
// resumes native sessions, and a Process is one running agent.
//
// # Basics
//
// A returned Process proves nothing by itself: Ready confirms that the native
// session accepted its first turn and yields its native id; Stop returns a
// confirmed outcome (stopped, not-running) or says it could not confirm one
// (timeout, failed). baton never treats an unconfirmed stop as a stop: a
// process that may still run keeps the workspace reserved.
//
// A start is fresh or resumes a native id; its first turn is normal or
// report-only (read-only tools plus report submission, with scoped
// ReportCredentials). Every start carries the workspace's owner token when a
// reservation is held, and the handoff attempt it belongs to.
//
// A Process also reports what the agent said it really runs (Actual: the
// model and the agent's version), and, once it ended, how full its
// context window was after its turn (ExitStatus.Usage: the tokens in
// context as of the turn's last request, and the window's size when
// known). An engine that cannot tell reports the zero Usage; package
// session records the last usage reported on the session's row
// (store.Session.Usage) with the turn's end. The exec engine's Claude and
// Codex profiles report it; enginetest scripts it (Script.Usage); the acp
// engine reports none.
//
// Optional Engine capabilities are separate small interfaces found by type
// assertion: Validator, Reaper, Reconfigurer and Transcriber. A Transcriber
// reads back a session's conversation as transcript events, each marked
// with the turn it belongs to (transcript.Normal, or transcript.ReportOnly
// for the prompt and answer of a report-only turn, which are not
// conversation): the briefings of a transfer's target and of a fresh
// continuation replay it, and say the conversation was not included
// without it. baton works without them, later (an unsupported
// configuration fails at Start instead of at Create), or knowing less.
//
// A start may be two-phase (StartRequest.Admit): the engine spawns the
// process held, before the agent runs, and asks the caller to admit it. baton
// admits a launch in a store transaction that refuses it once another
// process has taken the workspace's reservation (the fencing epoch grew) or
// reaped the launch, so the fence and the agent's first instruction are
// ordered: an agent runs only if its admission committed first, and then a
// reap on the machine finds it. An engine that spawns subprocesses should
// support it; the exec engine does.
//
// Registry maps engine names to engines and is itself an Engine.
// engine/enginetest has a scripted engine for tests and demos. The
// multi-session host with generation handoff (package host, a product of its
// own) reads its sessions' Activity when they report it.
//
// # Caveats
//
// Without two-phase starts (an engine that never calls StartRequest.Admit),
// baton checks the fence again right after Start returns and stops the
// process at once if it was fenced out meanwhile: best effort, since the
// agent may already have run for that moment.
//
// Implementations must make Stop safe to call repeatedly and concurrently
// with Ready, and must close Done exactly once, after which Exit is stable.
package engine
