package transcript_test

import (
	"fmt"

	"github.com/batonhq/baton/transcript"
)

// A transfer's source answered a report-only turn after its conversation:
// only the events of normal turns are conversation.
func ExampleEvent() {
	events := []transcript.Event{
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Fix the parser."},
		{Speaker: transcript.Agent, Kind: transcript.ToolCall, Text: "go test ./..."},
		{Speaker: transcript.Agent, Kind: transcript.Message, Text: "Fixed; the tests pass."},
		{Speaker: transcript.User, Kind: transcript.Message, Text: "Write your handoff report.", Turn: transcript.ReportOnly},
	}
	for _, ev := range events {
		if ev.Kind != transcript.Message || ev.Turn == transcript.ReportOnly {
			continue
		}
		fmt.Printf("%s: %s\n", ev.Speaker, ev.Text)
	}
	// Output:
	// User: Fix the parser.
	// Agent: Fixed; the tests pass.
}
