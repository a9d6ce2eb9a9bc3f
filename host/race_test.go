package host_test

import (
	"testing"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// Commands that race the park get the terminal record (and the close),
// or are served; never unknown_session. On every connection one session
// runs a long turn, so the connection stays open after its other sessions
// are parked, while several callers keep sending commands for all of them.
func TestCommandsRacingTheParkNeverUnknown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts hosttest.ScriptedOptions
	}{{"settle-hook", hosttest.ScriptedOptions{}}, {"sweep-only", hosttest.ScriptedOptions{NoSettle: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := hosttest.Serve(t, hosttest.NewScripted(tc.opts), host.Options{})
			storm := hosttest.StartStorm(t, s.Socket, s.Dir, hosttest.StormOptions{
				Conns: 6, Sessions: 4, Callers: 3, Calls: 20_000, Busy: "sleep 600000"})
			if err := s.Host.Drain(""); err != nil {
				t.Fatal(err)
			}
			storm.WaitParked(t)
			storm.WaitRaced(t, 20)
			storm.AbortBusy(t)
			for _, err := range storm.Wait() {
				t.Errorf("a command racing the park got %v", err)
			}
			s.WaitDone(t)
			for _, tg := range storm.Targets() {
				tg.Conn.WaitClosed()
				recs := tg.Conn.Records()
				parked := map[string]int{}
				superseded := 0
				for _, r := range recs {
					switch {
					case r.Type == "host_superseded":
						superseded++
					case r.Type == "session_closed":
						if r.Reason != "handoff_parked" {
							t.Errorf("session_closed %s", r.Raw)
						}
						parked[r.SessionID]++
					case r.Type == "response" && !r.Success && r.Error != "session_closed":
						t.Fatalf("a command racing the park got %s", r.Raw)
					}
				}
				if superseded != 1 {
					t.Errorf("%d host_superseded on one connection", superseded)
				}
				for _, id := range tg.Sessions {
					if parked[id] != 1 {
						t.Errorf("session %s parked %d times on its connection", id, parked[id])
					}
				}
				hosttest.CheckOrder(t, hosttest.WireOrder(recs, tg.Busy, "agent_settled", "session_closed"),
					[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked"})
			}
		})
	}
}
