package host

import "github.com/batonhq/baton/clock"

// What the tests of package host_test reach inside the package. They live
// outside it because they use engine/host/hosttest, which imports it.

// ScriptedSession is the session a Scripted runtime opens with both
// optional capabilities, for test runtimes that wrap it.
type ScriptedSession = scriptedSession

// WithClock returns opts with the clock that drives the grace, the sweep
// and idle eviction.
func WithClock(opts Options, c clock.Clock) Options {
	opts.clock = c
	return opts
}

// SetOnSettle sets the hook rt's sessions call (under their lock) each
// time a turn ends.
func SetOnSettle(rt *Scripted, f func()) { rt.onSettle = f }
