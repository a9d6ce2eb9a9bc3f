// Package mutant names the bugs that can be planted in a Coordinator to
// prove that baton's property harness (handoff/handofftest) catches them.
// It is internal: code outside baton's handoff tree cannot plant a bug, and
// the zero Bugs (the only value it can pass) changes nothing.
package mutant

// Bugs is a set of planted bugs.
type Bugs uint

const (
	// ReplayAnyFingerprint: a replayed request id with another fingerprint
	// returns the existing handoff instead of ErrIdempotencyMismatch.
	ReplayAnyFingerprint Bugs = 1 << iota
	// ReconcileRelaunches: Reconcile retries what it interrupted.
	ReconcileRelaunches
	// ReleaseOnFailure: entering failed releases the reservation.
	ReleaseOnFailure
	// RebindOnFailure: entering failed moves the source's wakeups.
	RebindOnFailure
	// NoTokenCheck: SubmitReport accepts any token (another attempt's, a
	// forged one) while generating.
	NoTokenCheck
	// UnconfirmedStopIsStop: a cancel whose stop was not confirmed cancels
	// anyway.
	UnconfirmedStopIsStop
	// NoRestoreConfig: a failed, interrupted or cancelled transfer leaves
	// the workspace on the target's configuration.
	NoRestoreConfig
)

// Has reports whether b includes x.
func (b Bugs) Has(x Bugs) bool { return b&x != 0 }

// All lists every bug with its name, for table tests.
var All = []struct {
	Name string
	Bug  Bugs
}{
	{"ReplayAnyFingerprint", ReplayAnyFingerprint},
	{"ReconcileRelaunches", ReconcileRelaunches},
	{"ReleaseOnFailure", ReleaseOnFailure},
	{"RebindOnFailure", RebindOnFailure},
	{"NoTokenCheck", NoTokenCheck},
	{"UnconfirmedStopIsStop", UnconfirmedStopIsStop},
	{"NoRestoreConfig", NoRestoreConfig},
}
