//go:build linux

package clitest

import (
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
