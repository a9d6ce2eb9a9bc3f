//go:build race

package hosttest

// raceEnabled: this binary was built with -race, so Build builds with it
// too.
const raceEnabled = true
