package clitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// maxBody bounds a request body the scripted APIs read (a long
// conversation with its tools is a few hundred kilobytes).
const maxBody = 64 << 20

func readBody(r *http.Request) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r.Body, maxBody))
}

// SSE starts a stream of server-sent events on w and returns the function
// that writes one event and flushes it.
func SSE(w http.ResponseWriter) func(name, data string) {
	w.Header().Set("Content-Type", "text/event-stream")
	f, _ := w.(http.Flusher)
	return func(name, data string) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data)
		if f != nil {
			f.Flush()
		}
	}
}

// MessageStart writes the message_start event of a streamed Messages API
// reply from model.
func MessageStart(event func(name, data string), model string) {
	messageStart(event, model, defaultUsage)
}

// MessageTextBlock writes content block i of a streamed Messages API
// reply: text.
func MessageTextBlock(event func(name, data string), i int, text string) {
	q, _ := json.Marshal(text)
	event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i))
	event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, q))
	event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

// MessageText writes the rest of a streamed Messages API reply that is one
// text block, ending the turn.
func MessageText(event func(name, data string), text string) {
	MessageTextBlock(event, 0, text)
	MessageEnd(event, "end_turn")
}

// MessageEnd ends a streamed Messages API reply with stop_reason reason
// ("end_turn", or "tool_use" after MessageToolUse blocks).
func MessageEnd(event func(name, data string), reason string) {
	messageEnd(event, reason, defaultUsage)
}

// MessageToolUse writes content block i of a streamed Messages API reply: a call
// of the tool name, with id and the JSON input.
func MessageToolUse(event func(name, data string), i int, id, name string, input []byte) {
	q, _ := json.Marshal(string(input))
	event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name))
	event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, q))
	event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

// ResponseCreated writes the response.created event that opens a streamed
// Responses API reply.
func ResponseCreated(event func(name, data string)) {
	event("response.created", `{"type":"response.created","response":{"id":"resp_1"}}`)
}

// ResponseMessage writes an assistant message of one output text.
func ResponseMessage(event func(name, data string), text string) {
	q, _ := json.Marshal(text)
	event("response.output_item.done", `{"type":"response.output_item.done","item":{"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":`+string(q)+`}]}}`)
}

// ResponseText writes an assistant message of one output text, then
// ResponseCompleted.
func ResponseText(event func(name, data string), text string) {
	ResponseMessage(event, text)
	ResponseCompleted(event)
}

// ResponseCall writes a function call item: call_id callID of the tool
// name ("namespace/tool" for a namespace's tool) with the JSON arguments.
func ResponseCall(event func(name, data string), callID, name string, args []byte) {
	item := map[string]string{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": name, "arguments": string(args)}
	if ns, fn, ok := cutLast(name, "/"); ok {
		item["namespace"], item["name"] = ns, fn
	}
	b, _ := json.Marshal(item)
	event("response.output_item.done", `{"type":"response.output_item.done","item":`+string(b)+`}`)
}

// ResponseCompleted writes the response.completed event that ends a
// streamed Responses API reply.
func ResponseCompleted(event func(name, data string)) {
	responseCompleted(event, defaultUsage)
}

// ResponseFailed writes the response.failed event that fails a streamed
// Responses API reply with msg.
func ResponseFailed(event func(name, data string), msg string) {
	q, _ := json.Marshal(msg)
	event("response.failed", `{"type":"response.failed","response":{"id":"resp_1","error":{"code":"server_error","message":`+string(q)+`}}}`)
}

func cutLast(s, sep string) (before, after string, ok bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}
