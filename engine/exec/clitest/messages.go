package clitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// NewMessages starts a scripted Anthropic Messages API (POST
// /v1/messages) on 127.0.0.1, closed when the test ends: script answers
// every request, streamed or not. Any other request (Claude Code probes
// its base URL with HEAD /) gets 200 and an empty body. Give Claude Code
// its URL with ClaudeEnv (or the API's ClaudeEnv method).
func NewMessages(t testing.TB, script Script) *API { return StartMessages(script).cleanup(t) }

// StartMessages is NewMessages for a program that is not a test: the caller closes
// the API.
func StartMessages(script Script) *API {
	return startAPI("/v1/messages", http.StatusOK, decodeMessages, func(w http.ResponseWriter, r *http.Request, req Request, quit <-chan struct{}) {
		answerMessages(w, r, req, script(req), quit)
	})
}

// ClaudeEnv is ClaudeEnv(home, a.URL): the whole environment of a Claude
// Code CLI that talks to a.
func (a *API) ClaudeEnv(home string) []string { return ClaudeEnv(home, a.URL) }

// CodexConfig is CodexConfig(a.URL): the model provider of a Codex CLI
// that talks to a.
func (a *API) CodexConfig() []string { return CodexConfig(a.URL) }

func decodeMessages(body []byte) (Request, error) {
	var in struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	req := Request{Model: in.Model, Stream: in.Stream, System: blocksText(in.System)}
	for _, tl := range in.Tools {
		req.Tools = append(req.Tools, tl.Name)
	}
	names := map[string]string{}
	for _, m := range in.Messages {
		msg := Message{Role: m.Role}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			msg.Text = blocksText(m.Content)
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
			case "tool_use":
				names[b.ID] = b.Name
				msg.ToolUses = append(msg.ToolUses, ToolUse{ID: b.ID, Name: b.Name, Input: b.Input})
			case "tool_result":
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolUseID: b.ToolUseID, Tool: names[b.ToolUseID], IsError: b.IsError, Text: blocksText(b.Content)})
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func answerMessages(w http.ResponseWriter, r *http.Request, req Request, rep Reply, quit <-chan struct{}) {
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "api_error", "message": rep.Error}})
		w.Write(b)
		return
	}
	id := func(i int) string { return fmt.Sprintf("toolu_%d_%d", len(req.Messages), i) }
	if !req.Stream {
		if rep.Wait != nil && !rep.Wait.wait(r, quit) {
			return
		}
		var content []any
		if rep.Text != "" || len(rep.Calls) == 0 {
			content = append(content, map[string]string{"type": "text", "text": rep.Text})
		}
		for i, c := range rep.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": id(i), "name": c.Name, "input": input(c.Input)})
		}
		stop := "end_turn"
		if len(rep.Calls) > 0 {
			stop = "tool_use"
		}
		b, _ := json.Marshal(map[string]any{"id": "msg_0", "type": "message", "role": "assistant", "model": req.Model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	event := SSE(w)
	u := rep.usage()
	messageStart(event, req.Model, u)
	if rep.Wait != nil && !rep.Wait.wait(r, quit) {
		return
	}
	if rep.Error != "" {
		q, _ := json.Marshal(rep.Error)
		event("error", `{"type":"error","error":{"type":"api_error","message":`+string(q)+`}}`)
		return
	}
	i := 0
	if rep.Text != "" || len(rep.Calls) == 0 {
		MessageTextBlock(event, i, rep.Text)
		i++
	}
	for j, c := range rep.Calls {
		MessageToolUse(event, i+j, id(j), c.Name, input(c.Input))
	}
	if len(rep.Calls) > 0 {
		messageEnd(event, "tool_use", u)
		return
	}
	messageEnd(event, "end_turn", u)
}
