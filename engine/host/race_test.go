package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// Commands that race the park get the terminal record (and the close),
// or are served; never unknown_session. On every connection one session
// runs a long turn, so the connection stays open after its other sessions
// are parked, while several callers keep sending commands for all of them.
func TestCommandsRacingTheParkNeverUnknown(t *testing.T) {
	t.Parallel()
	const conns, perConn, callers, maxCalls = 6, 4, 3, 20_000
	for _, tc := range []struct {
		name string
		opts ScriptedOptions
	}{{"settle-hook", ScriptedOptions{}}, {"sweep-only", ScriptedOptions{NoSettle: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := serveHost(t, NewScripted(tc.opts), Options{})
			type client struct {
				w   *wire
				ids []string
			}
			var clients []client
			for c := range conns {
				cl := client{w: dial(t, s.sock)}
				for i := range perConn {
					cl.ids = append(cl.ids, cl.w.open(s.file(fmt.Sprintf("c%d-s%d.jsonl", c, i))))
				}
				cl.w.mustCall(Command{Type: CmdPrompt, SessionID: cl.ids[0], Text: "sleep 600000"})
				clients = append(clients, cl)
			}
			var calling sync.WaitGroup
			started := make(chan struct{}, conns*callers)
			unexpected := make(chan error, conns*callers)
			for _, cl := range clients {
				for k := range callers {
					calling.Add(1)
					go func() {
						defer calling.Done()
						for n := range maxCalls {
							id := cl.ids[(n+k)%len(cl.ids)]
							cmd := Command{Type: CmdGetState, SessionID: id}
							if n%2 == 1 && id != cl.ids[0] {
								cmd = Command{Type: CmdPrompt, SessionID: id, Text: "ping"}
							}
							_, err := cl.w.c.Call(context.Background(), cmd)
							if errors.Is(err, ErrClosed) {
								return
							}
							if err != nil && !errors.Is(err, ErrSessionClosed) {
								unexpected <- err
								return
							}
							if n == 10 {
								started <- struct{}{}
							}
						}
					}()
				}
			}
			for range conns * callers {
				<-started
			}
			if err := s.h.Drain(nil); err != nil {
				t.Fatal(err)
			}
			for _, cl := range clients {
				for _, id := range cl.ids[1:] {
					cl.w.waitFor("parked", isEvent(EventSessionClosed, id))
				}
			}
			pollUntil(t, "commands hitting parked handles", func() bool {
				for _, cl := range clients {
					if racedOn(cl.w) < 20 {
						return false
					}
				}
				return true
			})
			for _, cl := range clients {
				if _, err := cl.w.c.Send(Command{Type: CmdAbort, SessionID: cl.ids[0]}); err != nil {
					t.Fatal(err)
				}
			}
			calling.Wait()
			close(unexpected)
			for err := range unexpected {
				t.Errorf("a command racing the park got %v", err)
			}
			s.waitDone(t)
			for _, cl := range clients {
				cl.w.waitClosed()
				recs := cl.w.records()
				parked := map[string]int{}
				superseded := 0
				for _, r := range recs {
					switch {
					case r.Type == EventHostSuperseded:
						superseded++
					case r.Type == EventSessionClosed:
						if r.Reason != ReasonHandoffParked {
							t.Errorf("session_closed %s", r.Raw)
						}
						parked[r.SessionID]++
					case r.Type == TypeResponse && !r.Success && r.Error != CodeSessionClosed:
						t.Fatalf("a command racing the park got %s", r.Raw)
					}
				}
				if superseded != 1 {
					t.Errorf("%d host_superseded on one connection", superseded)
				}
				for _, id := range cl.ids {
					if parked[id] != 1 {
						t.Errorf("session %s parked %d times on its connection", id, parked[id])
					}
				}
				checkOrder(t, wireOrder(recs, cl.ids[0], EventAgentSettled, EventSessionClosed),
					[]string{EventHostSuperseded, EventAgentSettled, "session_closed:handoff_parked"})
			}
		})
	}
}

// racedOn counts the session_closed answers a connection got so far.
func racedOn(w *wire) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.recs {
		if r.Type == TypeResponse && r.Error == CodeSessionClosed {
			n++
		}
	}
	return n
}
