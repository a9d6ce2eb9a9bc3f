package clitest

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
)

// The CLI versions baton's profiles and this kit are verified with, and
// the npm packages that install them.
const (
	ClaudeVersion = "2.1.197"
	CodexVersion  = "0.171.0"

	ClaudePackage = "@anthropic-ai/claude-code@" + ClaudeVersion
	CodexPackage  = "@openai/codex@" + CodexVersion
)

// The environment variables that name the CLI executables.
const (
	EnvClaudeBin = "BATON_CLAUDE_BIN"
	EnvCodexBin  = "BATON_CODEX_BIN"
)

// Bin finds an agent CLI: the path in $envVar, else name on PATH. Without
// it the test is skipped, except under CI=true, where it fails (a CI
// script installs the CLIs); install says how to get it.
func Bin(t testing.TB, envVar, name, install string) string {
	t.Helper()
	if p, err := LookBin(envVar, name); err == nil {
		return p
	}
	msg := fmt.Sprintf("the %s CLI is not installed: set %s or put %s on PATH (%s)", name, envVar, name, install)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// LookBin returns the path in $envVar, else name's path on PATH, for a
// program (not a test) that needs the CLI. Errors: exec.ErrNotFound's
// (os/exec) when neither names it.
func LookBin(envVar, name string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		return p, nil
	}
	return osexec.LookPath(name)
}

// ClaudeBin finds the Claude Code CLI: $BATON_CLAUDE_BIN, else claude on
// PATH (see Bin).
func ClaudeBin(t testing.TB) string {
	t.Helper()
	return Bin(t, EnvClaudeBin, "claude", "npm install "+ClaudePackage)
}

// CodexBin finds the Codex CLI: $BATON_CODEX_BIN, else codex on PATH (see
// Bin).
func CodexBin(t testing.TB) string {
	t.Helper()
	return Bin(t, EnvCodexBin, "codex", "npm install "+CodexPackage)
}

// TestKey is the API key the environments give the CLIs; the scripted
// APIs accept any key.
const TestKey = "sk-test"

// ClaudeEnv is the whole environment of a Claude Code CLI run in the
// isolated home, talking to the Messages API at apiURL with a test key and
// no other traffic (see the package documentation).
func ClaudeEnv(home, apiURL string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"ANTHROPIC_BASE_URL=" + apiURL, "ANTHROPIC_API_KEY=" + TestKey,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1",
	}
}

// CodexEnv is the whole environment of a Codex CLI run in the isolated
// home (also its CODEX_HOME), with a test key. The API comes from the
// configuration (CodexConfig).
func CodexEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CODEX_HOME=" + home, "OPENAI_API_KEY=" + TestKey}
}

// WriteCodexConfig writes $home/config.toml (mode 0600) with the model
// provider of CodexConfig as Codex's default: for a program that runs
// Codex without -c overrides, given CODEX_HOME=home (CodexEnv). Errors:
// the file system's.
func WriteCodexConfig(home, apiURL string) error {
	toml := `model_provider = "scripted"

[model_providers.scripted]
name = "scripted"
base_url = "` + apiURL + `/v1"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
stream_max_retries = 0
request_max_retries = 0
`
	return os.WriteFile(filepath.Join(home, "config.toml"), []byte(toml), 0o600)
}

// CodexConfig is the Codex configuration (-c overrides, for
// exec.CodexOptions.Config) of a model provider named scripted, streaming
// from the Responses API at apiURL (its /v1/responses), with retries off.
func CodexConfig(apiURL string) []string {
	return []string{
		"model_provider=scripted",
		`model_providers.scripted={name="scripted",base_url="` + apiURL + `/v1",wire_api="responses",env_key="OPENAI_API_KEY",stream_max_retries=0,request_max_retries=0}`,
	}
}
