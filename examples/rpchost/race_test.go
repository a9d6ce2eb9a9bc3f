package main

import (
	"testing"

	"github.com/batonhq/baton/host/hosttest"
)

// Commands sent while the old generation parks never get unknown_session:
// each is served, or answered session_closed after the terminal record, or
// left unanswered by the close. On every connection one session runs a
// long turn (so the connection stays open after its other sessions are
// parked) while several callers keep sending commands for all of them; a
// real successor takes over meanwhile.
func TestCommandsDuringParkNeverUnknownSession(t *testing.T) {
	t.Parallel()
	dir, sock, a := serveFresh(t)
	// The busy turns are aborted by the test.
	storm := hosttest.StartStorm(t, sock, dir, hosttest.StormOptions{
		Conns: 4, Sessions: 3, Callers: 3, Calls: 20_000, Busy: "sleep 600000"})
	startServe(t, sock)
	storm.WaitParked(t)
	storm.WaitRaced(t, 20)
	storm.AbortBusy(t)
	for _, err := range storm.Wait() {
		t.Errorf("a command racing the park got %v", err)
	}
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	raced := 0
	for _, tg := range storm.Targets() {
		tg.Conn.WaitClosed()
		parked := map[string]bool{}
		for _, r := range tg.Conn.Records() {
			switch {
			case r.Type == "session_closed":
				parked[r.SessionID] = r.Reason == "handoff_parked"
			case r.Type == "response" && !r.Success:
				if r.Error != "session_closed" {
					t.Fatalf("a command racing the park got %s", r.Raw)
				}
				raced++
			}
		}
		for _, id := range tg.Sessions {
			if !parked[id] {
				t.Errorf("session %s not parked on its connection", id)
			}
		}
		hosttest.CheckOrder(t, tg.Conn.Order(tg.Busy, "agent_settled", "session_closed"),
			[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked", hosttest.Closed})
	}
	t.Logf("%d commands answered session_closed after their park", raced)
}
