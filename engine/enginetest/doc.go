// Package enginetest provides a scripted engine.Engine for tests and demos:
// every start follows a Script that says whether it fails, how and when
// readiness resolves, whether a report-only turn submits a report (with the
// right or a wrong token), how the process ends, and what Stop answers. It
// records every launch with its process's lifetime, so a test can assert
// "launched exactly once" and "never two processes in a workspace at the
// same moment" (Overlaps, MaxRunning), across every caller sharing it.
//
// # Basics
//
// Build one with New. A start's script is chosen in this order: the
// Options.ScriptFor hook, then the FIFO queue filled by Push, then
// Options.Default. The zero Script is "ready at once with native-<n>, run
// until stopped, Stop confirms".
//
// All timing runs on Options.Clock. With a *clock.Fake, a script's
// ReadyDelay arms a timer during Start (before the launch is recorded and
// Start returns), and readiness resolves only when the test advances the
// clock past it; nothing in the package sleeps. Scripted work that follows readiness (a report submission,
// the end of an EndAfterReady turn) runs on one goroutine per process, so
// tests wait on Process.Done, Process.Reported or Process.Ready rather than
// assume it happened when Start returned.
//
// A Process can also be driven by hand: Release, Reject and Finish resolve
// a held readiness or end the process; SetStopOutcome changes what the next
// Stop returns; CrashAll ends every running process as if the host died. The
// engine is an engine.Reaper: ReapLaunch ends every process of a launch
// (StartRequest.LaunchID), whoever started it. It is an engine.Transcriber
// too: a session's transcript holds, for each of its starts, the prompt (the
// user's message) and the script's Reply (the agent's), marked with the
// start's turn, so a report-only turn's prompt and answer are marked
// transcript.ReportOnly as a real engine's are.
//
// # Caveats
//
// The engine imitates the contract of engine.Engine, not any real agent CLI:
// no prompt is interpreted, and the only activity it reports is a turn (see
// Process.Activity), plus what SetActivity adds.
//
// Close ends every running process (its Exit carries ErrClosed) and waits
// for the package's goroutines; a goroutine blocked in the Options.Submit
// hook holds Close until the hook returns, so the hook must honour its
// context, which Close cancels.
package enginetest
