package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// entry is one committed transition and when it was observed.
type entry struct {
	at time.Time
	ev handoff.Event
}

// timeline records the Coordinator's events (it is its WithObserver
// function) and lets the program wait for one without polling.
type timeline struct {
	mu      sync.Mutex
	entries []entry
	changed chan struct{} // closed and replaced on every record
}

func newTimeline() *timeline { return &timeline{changed: make(chan struct{})} }

// record is the observer: it must not block, and does not.
func (t *timeline) record(ev handoff.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, entry{at: time.Now(), ev: ev})
	close(t.changed)
	t.changed = make(chan struct{})
}

// settled waits for attempt of handoff id to leave the active states
// (stopping, generating, starting) and returns the handoff as that
// transition committed it. Errors: ctx's.
func (t *timeline) settled(ctx context.Context, id baton.HandoffID, attempt int) (store.Handoff, error) {
	for {
		t.mu.Lock()
		for _, e := range t.entries {
			h := e.ev.Handoff
			if h.ID == id && h.Attempt == attempt && !active(h) {
				t.mu.Unlock()
				return h, nil
			}
		}
		ch := t.changed
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return store.Handoff{}, fmt.Errorf("waiting for attempt %d of %s to settle: %w", attempt, id, ctx.Err())
		}
	}
}

func active(h store.Handoff) bool {
	switch h.State {
	case store.StateStopping, store.StateGenerating, store.StateStarting:
		return true
	}
	return false
}

// print writes the events of handoff id, one a line: the offset since its
// first event, the trigger, the state it left the handoff in, the attempt.
func (t *timeline) print(w io.Writer, id baton.HandoffID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var start time.Time
	for _, e := range t.entries {
		h := e.ev.Handoff
		if h.ID != id {
			continue
		}
		if start.IsZero() {
			start = e.at
		}
		ms := float64(e.at.Sub(start).Microseconds()) / 1000
		fmt.Fprintf(w, "    %+7.1fms  %-18s -> %-11s attempt %d\n", ms, e.ev.Trigger, h.State, h.Attempt)
	}
}
