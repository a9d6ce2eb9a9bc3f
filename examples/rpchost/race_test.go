package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/batonhq/baton/engine/host"
)

// Commands sent while the old generation parks never get unknown_session:
// each is served, or answered session_closed after the terminal record, or
// left unanswered by the close. On every connection one session runs a
// long turn (so the connection stays open after its other sessions are
// parked) while several callers keep sending commands for all of them; a
// real successor takes over meanwhile.
func TestCommandsDuringParkNeverUnknownSession(t *testing.T) {
	t.Parallel()
	const conns, perConn, callers, maxCalls = 4, 3, 3, 20_000
	dir := tempDir(t)
	sock := filepath.Join(dir, "h.sock")
	a := startServe(t, sock)
	type client struct {
		w   *wire
		ids []string
	}
	var clients []client
	for c := range conns {
		cl := client{w: dial(t, sock)}
		for i := range perConn {
			cl.ids = append(cl.ids, cl.w.open(filepath.Join(dir, fmt.Sprintf("c%d-%d.jsonl", c, i))))
		}
		cl.w.prompt(cl.ids[0], "sleep 600000") // aborted by the test
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
					cmd := host.Command{Type: host.CmdGetState, SessionID: id}
					if n%2 == 1 && id != cl.ids[0] {
						cmd = host.Command{Type: host.CmdPrompt, SessionID: id, Text: "ping"}
					}
					_, err := cl.w.c.Call(context.Background(), cmd)
					if errors.Is(err, host.ErrClosed) {
						return // the host closed the connection
					}
					if err != nil && !errors.Is(err, host.ErrSessionClosed) {
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
	startServe(t, sock)
	for _, cl := range clients {
		for _, id := range cl.ids[1:] {
			cl.w.waitFor("parked", isEvent(host.EventSessionClosed, id))
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
		if _, err := cl.w.c.Send(host.Command{Type: host.CmdAbort, SessionID: cl.ids[0]}); err != nil {
			t.Fatal(err)
		}
	}
	calling.Wait()
	close(unexpected)
	for err := range unexpected {
		t.Errorf("a command racing the park got %v", err)
	}
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	raced := 0
	for _, cl := range clients {
		cl.w.waitClosed()
		parked := map[string]bool{}
		for _, r := range cl.w.records() {
			switch {
			case r.Type == host.EventSessionClosed:
				parked[r.SessionID] = r.Reason == host.ReasonHandoffParked
			case r.Type == host.TypeResponse && !r.Success:
				if r.Error != host.CodeSessionClosed {
					t.Fatalf("a command racing the park got %s", r.Raw)
				}
				raced++
			}
		}
		for _, id := range cl.ids {
			if !parked[id] {
				t.Errorf("session %s not parked on its connection", id)
			}
		}
		checkOrder(t, cl.w.wireOrder(cl.ids[0], host.EventAgentSettled, host.EventSessionClosed),
			[]string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked", "close"})
	}
	t.Logf("%d commands answered session_closed after their park", raced)
}

// racedOn counts the session_closed answers a connection got so far.
func racedOn(w *wire) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.recs {
		if r.Type == host.TypeResponse && r.Error == host.CodeSessionClosed {
			n++
		}
	}
	return n
}
