package enginetest

import (
	"time"

	"github.com/batonhq/baton/engine"
)

// ReadyBehavior says how a process's readiness resolves.
type ReadyBehavior int

const (
	// ReadyOK: Ready returns the native id (after ReadyDelay on the clock).
	ReadyOK ReadyBehavior = iota
	// ReadyReject: Ready returns engine.ErrReadyRejected; the process then
	// exits with ExitCode/ExitErr, or with code 1 when both are zero.
	ReadyReject
	// ReadyHold: Ready blocks until Process.Release, Reject or Finish, a
	// confirmed Stop, CrashAll, Close, or the caller's ctx.
	ReadyHold
	// ExitBeforeReady: the process exits with ExitCode/ExitErr before
	// readiness; Ready returns engine.ErrExitedBeforeReady. With a clean exit
	// it models "the first turn finished before readiness was confirmed".
	ExitBeforeReady
)

// String returns the constant's name.
func (b ReadyBehavior) String() string {
	switch b {
	case ReadyOK:
		return "ReadyOK"
	case ReadyReject:
		return "ReadyReject"
	case ReadyHold:
		return "ReadyHold"
	case ExitBeforeReady:
		return "ExitBeforeReady"
	}
	return "ReadyBehavior(?)"
}

// TokenChoice says which token a report-only turn submits its report with.
type TokenChoice int

const (
	// NoReport: the turn submits nothing.
	NoReport TokenChoice = iota
	// RightToken: the credentials of the start request, as given.
	RightToken
	// WrongToken: the start's credentials with a freshly minted token, which
	// no handoff expects.
	WrongToken
)

// String returns the constant's name.
func (c TokenChoice) String() string {
	switch c {
	case NoReport:
		return "NoReport"
	case RightToken:
		return "RightToken"
	case WrongToken:
		return "WrongToken"
	}
	return "TokenChoice(?)"
}

// Script is what one start does. The zero value starts, is ready at once
// with native id "native-<n>", runs until stopped, and confirms Stop.
type Script struct {
	// StartErr makes Start return it as is; nothing is launched, and the
	// attempt is recorded in Launches with Failed set.
	StartErr error
	// Ready says how readiness resolves.
	Ready ReadyBehavior
	// ReadyDelay is waited on the engine's clock before Ready resolves
	// (ReadyOK, ReadyReject) or the process exits (ExitBeforeReady).
	ReadyDelay time.Duration
	// NativeID is the id Ready returns. Default: req.NativeID for a resume,
	// else "native-<n>" with n the launch number.
	NativeID string
	// ExitCode and ExitErr are how the process ends when the script ends it
	// (ReadyReject, ExitBeforeReady, the end of a turn) or when a scripted
	// NotRunning stop finds it gone.
	ExitCode int
	ExitErr  error
	// StopOutcome is what Stop returns while the process runs; "" means
	// engine.Stopped. engine.Stopped ends the process with Exit().Stopped
	// set; engine.NotRunning ends it as if it had exited on its own just
	// before (ExitCode/ExitErr); engine.Timeout and engine.Failed leave it
	// running (and counted by Engine.Running).
	StopOutcome engine.StopOutcome
	// Report and ReportToken script a report-only turn (req.Turn ==
	// transcript.ReportOnly): after readiness, when Report != "" and ReportToken
	// != NoReport, the process calls Options.Submit with the chosen
	// credentials and records the returned error in Launch.ReportErr; then
	// the turn ends.
	Report      string
	ReportToken TokenChoice
	// Reply is the agent's answer, recorded in the session's transcript
	// (Engine.Transcript) as readiness succeeds, in the turn of the
	// start; blank records none. The start's prompt is recorded as the
	// user's message when the start succeeds.
	Reply string
	// Hang keeps a report-only turn running after its report step instead
	// of exiting with ExitCode/ExitErr.
	Hang bool
	// EndAfterReady makes a normal turn exit with ExitCode/ExitErr right
	// after readiness; without it a normal turn runs until stopped.
	EndAfterReady bool
	// Actual is what the process reports it really runs
	// (engine.Process.Actual), from its start, as an agent CLI says so in
	// its first line; the zero value reports nothing.
	Actual engine.Actual
	// Usage is the context usage the process reports in its exit status
	// (engine.ExitStatus.Usage), however it ends, stopped included; the
	// zero value reports none, as an engine that cannot tell.
	Usage engine.Usage
}

// stopOutcome is s.StopOutcome with its default.
func (s Script) stopOutcome() engine.StopOutcome {
	if s.StopOutcome == "" {
		return engine.Stopped
	}
	return s.StopOutcome
}

// rejectExit is how a rejected process exits: the scripted exit, or code 1
// when the script leaves it clean.
func (s Script) rejectExit() (int, error) {
	if s.ExitCode == 0 && s.ExitErr == nil {
		return 1, nil
	}
	return s.ExitCode, s.ExitErr
}
