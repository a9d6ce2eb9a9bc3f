// Package exec is an engine.Engine that runs a real agent CLI (Claude Code,
// Codex, or any program described by a Profile) as a child process per
// launch, and can find and stop every process of a launch after the host
// that spawned it crashed.
//
// # Basics
//
// A Profile says how to build the command line of a fresh start, a resume
// by native id and a report-only turn (argument templates with
// placeholders such as {prompt}, {native_id} and {model}), which
// configurations the CLI accepts, how the prompt is passed (argument,
// standard input or a private file), and how the child's standard output
// is read: line rules (JSON fields or a pattern) recognise the line that
// carries the native session id, the line that confirms readiness, the line
// that refuses the first turn and the line that ends a turn. Claude and
// Codex return the profiles of the two CLIs; New builds an Engine on one.
// Profile.LaunchExtra adds a launch's own files, flags and environment
// (package agent gives each launch its MCP configuration through it).
//
// Start spawns the child in Dir (the workspace root) and returns at once.
// Ready blocks until a readiness line arrives with a native id
// (engine.ErrReadyRejected after a refusal or once the launch's
// ReadyTimeout passed, engine.ErrExitedBeforeReady when the child ends
// first; either also matches engine.ErrSessionMissing or engine.ErrAuth
// when the child said so).
//
// Each launch runs in its own process group, with the parent-death signal
// set and BATON_LAUNCH_ID=<launch id> in the environment every descendant
// inherits. Stop sends SIGTERM to the group, SIGKILL after
// Options.StopGrace, and answers engine.Stopped only once every process of
// the launch is gone. ReapLaunch (engine.Reaper) finds and stops the
// processes of a launch whose host died. A start with
// engine.StartRequest.Admit is two-phase: the agent runs only once Admit
// returned nil.
//
// Every line the child prints becomes transcript events, appended to the
// session's transcript under Options.DataDir (JSON lines beside an offset
// index, synced at each turn end and at exit), each marked with its launch
// and turn. The index reads event i at the same cost at the start and the
// end of a large file; the Engine is an engine.Transcriber, which the
// briefings replay, and package agent pages through it for the history tool.
//
// # Context usage
//
// A launch reports how full its context window was as of its turn's last
// request to the model (engine.ExitStatus.Usage), read by the profile's
// UsageMeter (Output.Usage); without one, or when the output says nothing
// of it, it reports the zero engine.Usage (unknown). Profile.Windows
// supplies a window, by model, that the output does not name. DESIGN.md
// says where each CLI reports it.
//
// The Claude and Codex profiles are verified with Claude Code 2.1.197 and
// Codex 0.171.0 against scripted APIs (package clitest); DESIGN.md beside
// this package says what of each CLI was checked.
//
// # Caveats
//
// Linux only (process groups, the parent-death signal and /proc);
// elsewhere Start fails with engine.ErrUnsupportedConfig. A two-phase
// start needs /bin/sh. The parent-death signal fires when the host's
// thread that spawned the child exits: do not call Start from a goroutine
// that holds runtime.LockOSThread and then returns. A descendant that both
// clears its environment and leaves the launch's process group escapes
// ReapLaunch.
//
// One writer per transcript: two Engines on one data directory must not
// run launches of one session (the second gets an error matching baton.ErrBusy).
// Arguments are visible to every user of the machine: pass secrets (the
// report token) in a launch file or the environment, never in argv.
// Transcripts hold the conversation in clear text, mode 0600.
package exec
