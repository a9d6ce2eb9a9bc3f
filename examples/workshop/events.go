package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

// eventJSON is the data of one event.
type eventJSON struct {
	Seq         int64            `json:"seq"`
	Kind        store.ChangeKind `json:"kind"`
	Handoff     *handoffJSON     `json:"handoff,omitempty"`
	Session     *sessionJSON     `json:"session,omitempty"`
	Instruction *instructionJSON `json:"instruction,omitempty"`
}

// events streams the workspace's change feed (Coordinator.Watch) as
// Server-Sent Events: the
// event id is the feed's sequence number, the event name its kind
// (handoff, session, instruction), the data its record as JSON. A
// Last-Event-ID header (or an "after" query parameter) resumes after that
// id; comments keep the connection alive; the stream ends when the server
// shuts down.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	ws := baton.WorkspaceID(r.PathValue("ws"))
	after, err := lastEventID(r)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	if _, err := s.svc.Workspace(r.Context(), ws); err != nil {
		writeErr(w, r, err)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		writeErr(w, r, fmt.Errorf("streaming unsupported"))
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel) // shutdown ends the stream
	defer stop()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	fl.Flush()

	// Heartbeats go out from this goroutine only: the feed is read in
	// another and handed over, so that writes never interleave.
	type item struct {
		c   handoff.Change
		err error
	}
	items := make(chan item, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c, err := range s.co.Watch(ctx, ws, after) {
			select {
			case items <- item{c, err}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { cancel(); <-done }()
	hb := time.NewTicker(s.cfg.Heartbeat)
	defer hb.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C:
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
			fl.Flush()
		case it, ok := <-items:
			if !ok {
				return
			}
			// Write what is ready, then flush once: a burst of changes
			// goes out in one write.
			for {
				if it.err != nil {
					fmt.Fprintf(w, "event: error\ndata: %s\n\n", mustJSON(map[string]string{"error": it.err.Error()}))
					fl.Flush()
					return
				}
				if _, err := w.Write(eventBytes(it.c)); err != nil {
					return
				}
				select {
				case it, ok = <-items:
					if !ok {
						fl.Flush()
						return
					}
					continue
				default:
				}
				break
			}
			fl.Flush()
		}
	}
}

// eventBytes renders one change as a Server-Sent Event.
func eventBytes(c handoff.Change) []byte {
	ev := eventJSON{Seq: c.Seq, Kind: c.Kind}
	switch {
	case c.Handoff != nil:
		v := handoffView(*c.Handoff)
		ev.Handoff = &v
	case c.Session != nil:
		v := sessionView(*c.Session, "")
		ev.Session = &v
	case c.Instruction != nil:
		v := instructionView(*c.Instruction)
		ev.Instruction = &v
	}
	return fmt.Appendf(nil, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Kind, mustJSON(ev))
}

func lastEventID(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		v = strings.TrimSpace(r.URL.Query().Get("after"))
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errBadRequest("Last-Event-ID must be a non-negative integer")
	}
	return n, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}
