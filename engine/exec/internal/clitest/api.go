//go:build linux

package clitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

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

// Stall holds requests of a scripted API that should never be answered.
// Build it with NewStall.
type Stall struct {
	quit chan struct{}
	// Held receives (without blocking the handler) each time a request
	// starts being held.
	Held chan struct{}
}

// NewStall returns a Stall whose held requests are released when the test
// ends.
func NewStall(t testing.TB) *Stall {
	s := &Stall{quit: make(chan struct{}), Held: make(chan struct{}, 1)}
	t.Cleanup(func() { close(s.quit) })
	return s
}

// Hold signals Held and blocks until the client goes away or the test
// ends.
func (s *Stall) Hold(r *http.Request) {
	select {
	case s.Held <- struct{}{}:
	default:
	}
	select {
	case <-r.Context().Done():
	case <-s.quit:
	}
}

// API starts a scripted API on 127.0.0.1, closed when the test ends: h
// answers the POST requests to path, any other request gets the status
// other (Claude Code probes its base URL with HEAD /).
func API(t testing.TB, path string, other int, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			w.WriteHeader(other)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// DecodeJSON decodes the body of r into v. When it cannot, it answers 400
// Bad Request and returns false.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// MessageStart writes the message_start event of a streamed Messages API
// reply from model.
func MessageStart(event func(name, data string), model string) {
	event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`, model))
}

// MessageText writes the rest of a streamed Messages API reply that is one
// text block, ending the turn.
func MessageText(event func(name, data string), text string) {
	q, _ := json.Marshal(text)
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`)
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`)
	event("message_stop", `{"type":"message_stop"}`)
}

// ToolUse writes content block i of a streamed Messages API reply: a call
// of the tool name, with id and the JSON input.
func ToolUse(event func(name, data string), i int, id, name string, input []byte) {
	q, _ := json.Marshal(string(input))
	event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name))
	event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, q))
	event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}

// ToolUseEnd ends a streamed Messages API reply made of ToolUse blocks.
func ToolUseEnd(event func(name, data string)) {
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":20}}`)
	event("message_stop", `{"type":"message_stop"}`)
}

// ResponseCreated writes the response.created event that opens a streamed
// Responses API reply.
func ResponseCreated(event func(name, data string)) {
	event("response.created", `{"type":"response.created","response":{"id":"resp_1"}}`)
}

// ResponseText writes an assistant message of one output text, then
// ResponseCompleted.
func ResponseText(event func(name, data string), text string) {
	q, _ := json.Marshal(text)
	event("response.output_item.done", `{"type":"response.output_item.done","item":{"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":`+string(q)+`}]}}`)
	ResponseCompleted(event)
}

// ResponseCompleted writes the response.completed event that ends a
// streamed Responses API reply.
func ResponseCompleted(event func(name, data string)) {
	event("response.completed", `{"type":"response.completed","response":{"id":"resp_1","usage":{"input_tokens":10,"input_tokens_details":null,"output_tokens":5,"output_tokens_details":null,"total_tokens":15}}}`)
}
