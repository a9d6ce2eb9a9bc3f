package handofftest

import (
	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
)

// withCaps returns w with the optional capabilities of inner (store.Notifier,
// Incarnation: see package store's doc) passed through, as a decorator
// must: a wrapper that hid them would change how the code under test
// behaves (polling instead of notifications, waiting out leases instead of
// taking a dead incarnation's).
func withCaps(w, inner store.Store) store.Store {
	n, isN := inner.(store.Notifier)
	x, isX := inner.(exclusiveStore)
	switch {
	case isN && isX:
		return notifierExclusive{w, n, x}
	case isN:
		return notifier{w, n}
	case isX:
		return exclusive{w, x}
	}
	return w
}

// exclusiveStore is the capability of a store one process holds alone.
type exclusiveStore interface{ Incarnation() string }

type notifier struct {
	store.Store
	n store.Notifier
}

func (s notifier) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) { return s.n.Subscribe(ws) }

type exclusive struct {
	store.Store
	x exclusiveStore
}

func (s exclusive) Incarnation() string { return s.x.Incarnation() }

type notifierExclusive struct {
	store.Store
	n store.Notifier
	x exclusiveStore
}

func (s notifierExclusive) Subscribe(ws baton.WorkspaceID) (<-chan struct{}, func()) {
	return s.n.Subscribe(ws)
}

func (s notifierExclusive) Incarnation() string { return s.x.Incarnation() }
