package clitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// NewResponses starts a scripted OpenAI Responses API (POST
// /v1/responses) on 127.0.0.1, closed when the test ends: script answers
// every request as a stream. Any other request gets 404. Give Codex its
// URL with CodexConfig (or the API's CodexConfig method).
func NewResponses(t testing.TB, script Script) *API { return StartResponses(script).cleanup(t) }

// StartResponses is NewResponses for a program that is not a test: the caller closes
// the API.
func StartResponses(script Script) *API {
	return startAPI("/v1/responses", http.StatusNotFound, decodeResponses, func(w http.ResponseWriter, r *http.Request, req Request, quit <-chan struct{}) {
		answerResponses(w, r, req, script(req), quit)
	})
}

func decodeResponses(body []byte) (Request, error) {
	var in struct {
		Model        string `json:"model"`
		Stream       bool   `json:"stream"`
		Instructions string `json:"instructions"`
		Input        []struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Namespace string          `json:"namespace"`
			Name      string          `json:"name"`
			CallID    string          `json:"call_id"`
			Arguments string          `json:"arguments"`
			Output    json.RawMessage `json:"output"`
		} `json:"input"`
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, err
	}
	req := Request{Model: in.Model, Stream: in.Stream, System: in.Instructions}
	for _, tl := range in.Tools {
		if tl.Type != "namespace" {
			req.Tools = append(req.Tools, tl.Name)
		}
		for _, sub := range tl.Tools {
			req.Tools = append(req.Tools, tl.Name+"/"+sub.Name)
		}
	}
	names := map[string]string{}
	for _, it := range in.Input {
		switch it.Type {
		case "function_call":
			name := it.Name
			if it.Namespace != "" {
				name = it.Namespace + "/" + it.Name
			}
			names[it.CallID] = name
			req.Messages = append(req.Messages, Message{Role: "assistant", ToolUses: []ToolUse{{ID: it.CallID, Name: name, Input: json.RawMessage(it.Arguments)}}})
		case "function_call_output":
			req.Messages = append(req.Messages, Message{Role: "user", ToolResults: []ToolResult{{ToolUseID: it.CallID, Tool: names[it.CallID], Text: blocksText(it.Output)}}})
		case "message", "":
			req.Messages = append(req.Messages, Message{Role: it.Role, Text: blocksText(it.Content)})
		}
	}
	return req, nil
}

func answerResponses(w http.ResponseWriter, r *http.Request, req Request, rep Reply, quit <-chan struct{}) {
	if rep.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": rep.Error, "type": "invalid_request_error", "code": nil}})
		w.Write(b)
		return
	}
	event := SSE(w)
	ResponseCreated(event)
	if rep.Wait != nil && !rep.Wait.wait(r, quit) {
		return
	}
	if rep.Error != "" {
		ResponseFailed(event, rep.Error)
		return
	}
	if rep.Text != "" || len(rep.Calls) == 0 {
		ResponseMessage(event, rep.Text)
	}
	for i, c := range rep.Calls {
		ResponseCall(event, fmt.Sprintf("call_%d_%d", len(req.Messages), i), c.Name, input(c.Input))
	}
	responseCompleted(event, rep.usage())
}
