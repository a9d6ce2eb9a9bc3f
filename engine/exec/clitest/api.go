package clitest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Request is one request a CLI sent to a scripted API, decoded.
type Request struct {
	// Model is the model the CLI asked for.
	Model string
	// Stream says whether the CLI asked for a streamed reply. Claude Code
	// sends a few small requests that are not streamed.
	Stream bool
	// System is the system prompt (Messages) or the instructions
	// (Responses), its text joined.
	System string
	// Messages are the conversation, oldest first. Responses' input items
	// are each a Message: a message, a function call (an assistant Message
	// with one ToolUse) or a function call's output (a user Message with
	// one ToolResult).
	Messages []Message
	// Tools are the names of the tools offered, in the request's order.
	// A Responses namespace's tools (Codex lists an MCP server's tools as
	// one) are named "namespace/tool".
	Tools []string
	// Body is the request's raw JSON.
	Body []byte
}

// Message is one message of a Request's conversation.
type Message struct {
	// Role is "user", "assistant", or another role the API knows
	// ("developer", "system").
	Role string
	// Text is the message's text, its text blocks joined.
	Text        string
	ToolUses    []ToolUse
	ToolResults []ToolResult
}

// ToolUse is a tool call the model made earlier in the conversation.
type ToolUse struct {
	ID    string
	Name  string // "namespace/tool" for a Responses namespace's tool
	Input json.RawMessage
}

// ToolResult is the CLI's answer to a tool call.
type ToolResult struct {
	// ToolUseID is the call's id; Tool the called tool's name, found in
	// the conversation ("" when the call is not there).
	ToolUseID string
	Tool      string
	IsError   bool
	// Text is the result's text, its blocks joined.
	Text string
}

// Results returns the tool results the request answers: those of the
// messages after the conversation's last text from the user. A Script
// that answers them ends the turn it called the tools in.
func (r Request) Results() []ToolResult {
	var out []ToolResult
	for _, m := range slices.Backward(r.Messages) {
		if m.Role == "user" && m.Text != "" {
			break
		}
		out = append(slices.Clone(m.ToolResults), out...)
	}
	return out
}

// LastUser returns the text of the conversation's last user message with
// text: the turn's prompt, or what the user said last.
func (r Request) LastUser() string {
	for _, m := range slices.Backward(r.Messages) {
		if m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// Tool returns the name of the first tool offered whose name ends with
// suffix (a tool's own name matches however the CLI prefixes it:
// mcp__baton__read_source_history, mcp__baton/read_source_history), and
// whether there is one.
func (r Request) Tool(suffix string) (string, bool) {
	for _, n := range r.Tools {
		if strings.HasSuffix(n, suffix) {
			return n, true
		}
	}
	return "", false
}

// Reply is what the scripted model answers to one Request.
type Reply struct {
	// Text is the answer's text; with Calls, it comes before them.
	Text string
	// Calls are the tools the model calls; the turn then waits for their
	// results (a next Request).
	Calls []Call
	// Status, when not zero, answers with that HTTP status and an error
	// body of the API's shape carrying Error, instead of a reply.
	Status int
	// Error, with Status zero, fails the stream once it has started: an
	// error event (Messages) or response.failed (Responses).
	Error string
	// Wait, when set, holds the reply once its stream has started until
	// Wait opens (then the rest is sent), the CLI goes away or the test
	// ends.
	Wait *Gate
	// Usage, when set, is the token usage the reply reports (see Usage);
	// nil reports 10 input tokens and 5 output tokens.
	Usage *Usage
}

// Call is a tool call of a Reply.
type Call struct {
	// Name is the tool's name as the request offered it (Request.Tool
	// finds it); "namespace/tool" calls a Responses namespace's tool.
	Name string
	// Input is the call's arguments, encoded as JSON (nil: {}).
	Input any
}

// Text is a Reply of text that ends the turn.
func Text(s string) Reply { return Reply{Text: s} }

// Calls is a Reply that calls tools.
func Calls(calls ...Call) Reply { return Reply{Calls: calls} }

// Fail is a Reply of an HTTP error: status, with msg in the API's error
// body.
func Fail(status int, msg string) Reply { return Reply{Status: status, Error: msg} }

// Script answers the requests of a scripted API. It runs in the server's
// goroutines, one per request, possibly at the same time.
type Script func(Request) Reply

// Gate holds the replies that wait on it (Reply.Wait) until it opens.
// Build it with NewGate.
type Gate struct {
	once sync.Once
	open chan struct{}
	held chan struct{}
}

// NewGate returns a closed Gate.
func NewGate() *Gate { return &Gate{open: make(chan struct{}), held: make(chan struct{}, 1)} }

// Held receives (without holding up the server) each time a reply starts
// waiting on g.
func (g *Gate) Held() <-chan struct{} { return g.held }

// Open releases every reply waiting on g, and every later one. Opening
// twice does nothing.
func (g *Gate) Open() { g.once.Do(func() { close(g.open) }) }

// wait holds until g opens (true), or r's client goes away or quit closes
// (false).
func (g *Gate) wait(r *http.Request, quit <-chan struct{}) bool {
	select {
	case g.held <- struct{}{}:
	default:
	}
	select {
	case <-g.open:
		return true
	case <-r.Context().Done():
	case <-quit:
	}
	return false
}

// API is a scripted model API on 127.0.0.1. Safe for concurrent use.
type API struct {
	// URL is the API's base URL, http://127.0.0.1:port.
	URL string

	srv   *httptest.Server
	quit  chan struct{}
	close sync.Once

	mu   sync.Mutex
	reqs []Request
}

// startAPI starts an API whose POST requests to path serve answers (after
// decode and record); any other request gets the status other.
func startAPI(path string, other int, decode func([]byte) (Request, error), answer func(w http.ResponseWriter, r *http.Request, req Request, quit <-chan struct{})) *API {
	a := &API{quit: make(chan struct{})}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			w.WriteHeader(other)
			return
		}
		body, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req, err := decode(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = body
		a.mu.Lock()
		a.reqs = append(a.reqs, req)
		a.mu.Unlock()
		answer(w, r, req, a.quit)
	}))
	a.URL = a.srv.URL
	return a
}

// Close releases the replies still held and shuts the server down, waiting
// for its requests to end. Closing twice does nothing.
func (a *API) Close() {
	a.close.Do(func() {
		close(a.quit)
		a.srv.Close()
	})
}

// cleanup closes a when the test ends and returns a.
func (a *API) cleanup(t testing.TB) *API {
	t.Cleanup(a.Close)
	return a
}

// Requests returns the requests received so far, oldest first.
func (a *API) Requests() []Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reqs)
}

// Streamed returns the streamed requests received so far (the model turns
// of the CLI), oldest first.
func (a *API) Streamed() []Request {
	var out []Request
	for _, r := range a.Requests() {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

func input(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage(`{}`)
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("clitest: a Call's Input does not encode as JSON: " + err.Error())
	}
	return b
}

// blocksText joins the text of a content that is a string or an array of
// blocks with text.
func blocksText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}
