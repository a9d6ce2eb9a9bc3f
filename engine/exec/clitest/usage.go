package clitest

import (
	"encoding/json"
	"fmt"
)

// Usage is the token usage a scripted reply reports, for a test of what
// an engine makes of it (the exec engine's context usage).
//
//   - Messages API: the message_start event carries Input, CacheCreation
//     and CacheRead (input_tokens, cache_creation_input_tokens,
//     cache_read_input_tokens) and an output count of 1; the
//     message_delta event that ends the reply carries Output
//     (output_tokens), as the Anthropic API streams them.
//   - Responses API: response.completed carries input_tokens = Input +
//     CacheRead (the Responses API counts cached input in its input),
//     input_tokens_details.cached_tokens = CacheRead, output_tokens =
//     Output; CacheCreation has no field there and is ignored.
type Usage struct {
	Input, CacheCreation, CacheRead, Output int64
}

// defaultUsage is what a reply without Reply.Usage reports.
var defaultUsage = Usage{Input: 10, Output: 5}

func (r Reply) usage() Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return defaultUsage
}

func messageStart(event func(name, data string), model string, u Usage) {
	msg, _ := json.Marshal(map[string]any{
		"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int64{"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheCreation,
			"cache_read_input_tokens": u.CacheRead, "output_tokens": 1},
	})
	event("message_start", `{"type":"message_start","message":`+string(msg)+`}`)
}

func messageEnd(event func(name, data string), reason string, u Usage) {
	event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, u.Output))
	event("message_stop", `{"type":"message_stop"}`)
}

func responseCompleted(event func(name, data string), u Usage) {
	event("response.completed", fmt.Sprintf(`{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":null,"total_tokens":%d}}}`,
		u.Input+u.CacheRead, u.CacheRead, u.Output, u.Input+u.CacheRead+u.Output))
}
