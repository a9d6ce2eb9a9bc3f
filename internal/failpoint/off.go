//go:build !baton_failpoints

package failpoint

// Enabled is false in a build without the baton_failpoints tag: every
// guarded site compiles to nothing.
const Enabled = false

// Hit reports false: no failpoint exists in this build.
func Hit(string) bool { return false }
