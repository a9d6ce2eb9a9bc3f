package hosttest_test

import (
	"fmt"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// What one connection saw through a handoff, reduced to what matters for
// session s1: the announcement, its turn's end, the failed command that
// raced its park, and the park itself; s2's event is left out.
func ExampleWireOrder() {
	recs := []host.Record{
		{Type: "agent_start", SessionID: "s1"},
		{Type: "host_superseded", InstanceID: "host_a", Generation: 1},
		{Type: "agent_settled", SessionID: "s2"},
		{Type: "agent_settled", SessionID: "s1"},
		{Type: "session_closed", SessionID: "s1", Reason: "handoff_parked", SessionPath: "/w/a.jsonl"},
		{Type: "response", Command: "get_state", Error: "session_closed"},
	}
	fmt.Println(hosttest.Labels(recs))
	fmt.Println(hosttest.WireOrder(recs, "s1", "agent_settled", "session_closed", "response"))
	// Output:
	// [agent_start host_superseded agent_settled agent_settled session_closed:handoff_parked response:get_state:session_closed]
	// [host_superseded agent_settled session_closed:handoff_parked response:get_state:session_closed]
}
