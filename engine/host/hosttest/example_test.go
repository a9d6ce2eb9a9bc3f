package hosttest_test

import (
	"encoding/json"
	"fmt"

	"github.com/batonhq/baton/engine/host"
	"github.com/batonhq/baton/engine/host/hosttest"
)

// What one connection saw through a handoff, reduced to what matters for
// session s1: the announcement, its turn's end, the failed command that
// raced its park, and the park itself; s2's event is left out.
func ExampleWireOrder() {
	var recs []host.Record
	for _, line := range []string{
		`{"type":"agent_start","sessionId":"s1"}`,
		`{"type":"host_superseded","instanceId":"host_a","generation":1,"successor":null}`,
		`{"type":"agent_settled","sessionId":"s2"}`,
		`{"type":"agent_settled","sessionId":"s1"}`,
		`{"type":"session_closed","sessionId":"s1","reason":"handoff_parked","sessionPath":"/w/a.jsonl"}`,
		`{"id":"c7","type":"response","command":"get_state","success":false,"error":"session_closed"}`,
	} {
		var r host.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			panic(err)
		}
		recs = append(recs, r)
	}
	fmt.Println(hosttest.Labels(recs))
	fmt.Println(hosttest.WireOrder(recs, "s1", host.EventAgentSettled, host.EventSessionClosed, host.TypeResponse))
	// Output:
	// [agent_start host_superseded agent_settled agent_settled session_closed:handoff_parked response:get_state:session_closed]
	// [host_superseded agent_settled session_closed:handoff_parked response:get_state:session_closed]
}
