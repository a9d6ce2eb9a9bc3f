// Package failpoint plants named faults in baton's own code for tests, in
// the style of etcd's gofail: a site reads
//
//	if failpoint.Enabled && failpoint.Hit("handoff/skip-epoch-check") {
//		// the faulty path
//	}
//
// and a test enables the point by name.
//
// # Basics
//
// Failpoints exist only in a build with the tag baton_failpoints
// (go test -tags baton_failpoints ...). Without it Enabled is the constant
// false, so the compiler drops every guarded branch and the call to Hit: a
// release build carries neither the faulty path nor the hook, and Enable
// does not exist. With the tag, Enable arms a point until the returned
// function disarms it, and Hit reports whether the point is armed, counting
// every evaluation so that a test can prove the site was reached.
//
// # Caveats
//
// With the tag, the set of armed points is process-wide (a site has no
// other way to learn of it): a test that arms a point must not run in
// parallel with tests that expect the code to be correct. The package is
// internal: no API outside baton's module can arm a fault.
package failpoint
