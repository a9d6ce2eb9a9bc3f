package workspace

import (
	"slices"

	"github.com/batonhq/baton"
)

// Given records, by name, the options a constructor was given, so that one
// given twice is refused (baton.ErrOptionConflict) rather than the last
// silently winning.
type Given struct {
	names []string
	err   error
}

// Add records option name; the second time it records the conflict.
func (g *Given) Add(name string) {
	if slices.Contains(g.names, name) && g.err == nil {
		g.err = baton.Errorf(baton.ErrOptionConflict, "%s given twice", name)
	}
	g.names = append(g.names, name)
}

// Err returns the first conflict Add recorded.
func (g *Given) Err() error { return g.err }
