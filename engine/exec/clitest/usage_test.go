package clitest

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestReplyUsage: a reply's Usage is what each API's stream reports (the
// Messages API's message_start and message_delta, the Responses API's
// response.completed), and a reply without one reports the default.
func TestReplyUsage(t *testing.T) {
	u := &Usage{Input: 7, CacheCreation: 500, CacheRead: 33000, Output: 60}
	ctx := Ctx(t, 30*time.Second)
	replies := make(chan Reply, 1)
	msgs := NewMessages(t, func(Request) Reply { return <-replies })
	resps := NewResponses(t, func(Request) Reply { return <-replies })
	usageOf := func(ev []string, typ string) map[string]any {
		t.Helper()
		for _, e := range ev {
			var d struct {
				Type     string `json:"type"`
				Usage    map[string]any
				Message  struct{ Usage map[string]any }
				Response struct {
					Usage map[string]any
				}
			}
			if json.Unmarshal([]byte(e), &d) == nil && d.Type == typ {
				switch {
				case d.Usage != nil:
					return d.Usage
				case d.Message.Usage != nil:
					return d.Message.Usage
				}
				return d.Response.Usage
			}
		}
		t.Fatalf("no %s event in %s", typ, strings.Join(ev, "\n"))
		return nil
	}
	for _, r := range []*Usage{u, nil} {
		replies <- Reply{Text: "done", Usage: r}
		_, body := post(t, ctx, msgs.URL+"/v1/messages", messagesReq)
		ev := events(body)
		start, delta := usageOf(ev, "message_start"), usageOf(ev, "message_delta")
		want := *u
		if r == nil {
			want = defaultUsage
		}
		if start["input_tokens"] != float64(want.Input) || start["cache_creation_input_tokens"] != float64(want.CacheCreation) ||
			start["cache_read_input_tokens"] != float64(want.CacheRead) || delta["output_tokens"] != float64(want.Output) {
			t.Errorf("Messages with usage %+v: message_start %v, message_delta %v", r, start, delta)
		}
		replies <- Reply{Text: "done", Usage: r}
		_, body = post(t, ctx, resps.URL+"/v1/responses", responsesReq)
		done := usageOf(events(body), "response.completed")
		cached, _ := done["input_tokens_details"].(map[string]any)
		if done["input_tokens"] != float64(want.Input+want.CacheRead) || cached["cached_tokens"] != float64(want.CacheRead) || done["output_tokens"] != float64(want.Output) {
			t.Errorf("Responses with usage %+v: response.completed %v", r, done)
		}
	}
}
