package handoff

import (
	"slices"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// public is the row h as a Coordinator returns it: the hash of the
// generation token left out (zero), its history a copy of its own.
func public(h store.Handoff) store.Handoff {
	h.GenerationToken = baton.TokenHash{}
	h.History = slices.Clone(h.History)
	return h
}
