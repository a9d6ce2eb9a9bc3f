//go:build linux

package clitest

import (
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"testing"
)

// Bin finds an agent CLI: the path in $envVar, else name on PATH. Without
// it the test is skipped, except under CI=true, where it fails (the CI
// script installs the CLIs); install says how to get it.
func Bin(t testing.TB, envVar, name, install string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	if p, err := osexec.LookPath(name); err == nil {
		return p
	}
	msg := fmt.Sprintf("the %s CLI is not installed: set %s or put %s on PATH (%s)", name, envVar, name, install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// ClaudeBin finds the Claude Code CLI: $BATON_CLAUDE_BIN, else claude on
// PATH (see Bin).
func ClaudeBin(t testing.TB) string {
	t.Helper()
	return Bin(t, "BATON_CLAUDE_BIN", "claude", "npm install @anthropic-ai/claude-code")
}

// CodexBin finds the Codex CLI: $BATON_CODEX_BIN, else codex on PATH (see
// Bin).
func CodexBin(t testing.TB) string {
	t.Helper()
	return Bin(t, "BATON_CODEX_BIN", "codex", "npm install @openai/codex")
}

// ClaudeEnv is the whole environment of a Claude Code CLI run in the
// isolated home, talking to the Messages API at apiURL with a test key and
// no other traffic.
func ClaudeEnv(home, apiURL string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"ANTHROPIC_BASE_URL=" + apiURL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
	}
}

// CodexEnv is the whole environment of a Codex CLI run in the isolated
// home (also its CODEX_HOME), with a test key.
func CodexEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "OPENAI_API_KEY=sk-test"}
}

// CodexProvider is the Codex -c configuration of a model provider, named
// scripted, streaming from the Responses API at apiURL, with retries off.
func CodexProvider(apiURL string) []string {
	return []string{
		"model_provider=scripted",
		`model_providers.scripted={name="scripted",base_url="` + apiURL + `/v1",wire_api="responses",env_key="OPENAI_API_KEY",stream_max_retries=0,request_max_retries=0}`,
	}
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
