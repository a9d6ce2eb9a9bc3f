// Package notify is the in-process side of store.Notifier shared by the
// backends: a set of coalescing subscriptions, by workspace, that a
// committer wakes without ever blocking.
package notify

import (
	"slices"
	"sync"

	"github.com/batonhq/baton"
)

// Hub holds subscriptions. The zero Hub is ready to use; it must not be
// copied after first use.
type Hub struct {
	mu   sync.Mutex
	next int
	subs map[int]sub
}

type sub struct {
	ws baton.WorkspaceID
	ch chan struct{}
}

// Subscribe returns a channel of capacity 1 that receives a value after
// Notify names ws (ws == "": any workspace), and a function that ends the
// subscription. cancel is idempotent and never closes ch.
func (h *Hub) Subscribe(ws baton.WorkspaceID) (ch <-chan struct{}, cancel func()) {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.subs == nil {
		h.subs = map[int]sub{}
	}
	id := h.next
	h.next++
	h.subs[id] = sub{ws: ws, ch: c}
	var once sync.Once
	return c, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, id)
			h.mu.Unlock()
		})
	}
}

// Notify wakes the subscribers of the workspaces in grown and those of
// every workspace; a subscriber whose channel already holds a value keeps
// that one (coalescing). It never blocks on a reader.
func (h *Hub) Notify(grown []baton.WorkspaceID) {
	if len(grown) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		if s.ws == "" || slices.Contains(grown, s.ws) {
			wake(s.ch)
		}
	}
}

// WakeAll wakes every subscriber (a store that closes uses it, so that
// readers read again and learn it is closed).
func (h *Hub) WakeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs {
		wake(s.ch)
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
