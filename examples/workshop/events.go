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
	"github.com/batonhq/baton/store"
)

// eventJSON is the data of one event.
type eventJSON struct {
	Seq         int64              `json:"seq"`
	Kind        string             `json:"kind"`
	Handoff     *handoffJSON       `json:"handoff,omitempty"`
	Session     *sessionJSON       `json:"session,omitempty"`
	Instruction *store.Instruction `json:"instruction,omitempty"`
}

// events streams the workspace's change feed (Coordinator.Watch) as
// Server-Sent Events: the
// event id is the feed's sequence number, the event name its kind
// (handoff, session, instruction), the data its record as JSON. A
// Last-Event-ID header (or an "after" query parameter) resumes after that
// id; comments keep the connection alive; the stream ends when the server
// shuts down.
//
// A resume point past the end of the feed (a client resuming against a
// store that was reset, or a made-up id) is answered: the stream starts
// with an "event: reset" whose id is the feed's current last sequence
// and whose data is {"lastSeq": n, "after": the id given}; the stream
// goes on from there, and a browser's EventSource resumes from n when
// it reconnects. The client should reload what it shows.
//
// At most cfg.MaxStreams streams are open at once; past it a stream is
// refused before it starts (503 too-many-streams, Retry-After). Each
// write to a stream must complete within cfg.StreamWriteTimeout: a reader
// that stops reading is dropped, and no other stream waits for it.
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
	if _, ok := w.(http.Flusher); !ok {
		writeErr(w, r, fmt.Errorf("streaming unsupported"))
		return
	}
	if n := s.streams.Add(1); n > int64(s.cfg.MaxStreams) {
		s.streams.Add(-1)
		w.Header().Set("Retry-After", "5")
		writeErr(w, r, &apiError{http.StatusServiceUnavailable, "too-many-streams",
			fmt.Sprintf("%d event streams are open, the most this server serves (-max-streams): retry later", s.cfg.MaxStreams)})
		return
	}
	defer s.streams.Add(-1)
	var last int64
	if err := s.st.View(r.Context(), func(tx store.Tx) (err error) { last, err = tx.LastSeq(ws); return err }); err != nil {
		writeErr(w, r, err)
		return
	}
	rc := http.NewResponseController(w)
	// deadline bounds the next write: a stalled reader fails it.
	deadline := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.cfg.StreamWriteTimeout)) }
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.base, cancel) // shutdown ends the stream
	defer stop()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	deadline()
	fmt.Fprint(w, "retry: 1000\n\n")
	if after > last {
		fmt.Fprintf(w, "id: %d\nevent: reset\ndata: %s\n\n", last, mustJSON(map[string]int64{"lastSeq": last, "after": after}))
		after = last
	}
	if rc.Flush() != nil {
		return
	}

	// Heartbeats go out from this goroutine only: the feed is read in
	// another and handed over, so that writes never interleave.
	type item struct {
		c   store.Change
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
			deadline()
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		case it, ok := <-items:
			if !ok {
				return
			}
			deadline()
			// Write what is ready, then flush once: a burst of changes
			// goes out in one write.
			for {
				if it.err != nil {
					fmt.Fprintf(w, "event: error\ndata: %s\n\n", mustJSON(map[string]string{"error": it.err.Error()}))
					_ = rc.Flush()
					return
				}
				if _, err := w.Write(eventBytes(it.c)); err != nil {
					return
				}
				select {
				case it, ok = <-items:
					if !ok {
						_ = rc.Flush()
						return
					}
					continue
				default:
				}
				break
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}

// eventBytes renders one change as a Server-Sent Event.
func eventBytes(c store.Change) []byte {
	ev := eventJSON{Seq: c.Seq}
	switch {
	case c.Handoff != nil:
		v := handoffView(*c.Handoff)
		ev.Kind, ev.Handoff = "handoff", &v
	case c.Session != nil:
		v := sessionView(*c.Session, "")
		ev.Kind, ev.Session = "session", &v
	case c.Instruction != nil:
		ev.Kind, ev.Instruction = "instruction", c.Instruction
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
