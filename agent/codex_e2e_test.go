//go:build linux

package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
)

// TestCodexTransferOverMCP is TestClaudeTransferOverMCP with the real
// Codex CLI, registered by New (Config.Codex), against a scripted Responses API.
func TestCodexTransferOverMCP(t *testing.T) {
	bin := clitest.CodexBin(t)
	api := clitest.NewResponses(t, e2eScript(e2eReport))
	r := transferE2E(t, rigOpts{engine: agent.Codex, model: "gpt-test-1", env: clitest.CodexEnv(clitest.Home(t)),
		codex: &exec.CodexOptions{Command: bin, Config: api.CodexConfig()}}, api, "gpt-test-2", "mcp__baton/")

	// The baton tools each request offered: none to the source's turn,
	// the report scope's, then the target scope's.
	var sets []string
	for _, baton := range offeredTools(api, "mcp__baton/") {
		if k := strings.Join(baton, ","); len(sets) == 0 || sets[len(sets)-1] != k {
			sets = append(sets, k)
		}
	}
	want := []string{"", "mcp__baton/get_handoff_facts,mcp__baton/submit_session_handoff", "mcp__baton/get_handoff_facts,mcp__baton/read_source_history"}
	if !slices.Equal(sets, want) {
		t.Errorf("the baton tools offered, turn after turn: %q; want %q", sets, want)
	}

	// The MCP exchange of each wired turn (Codex 0.171.0 asks for
	// protocol 2025-06-18); the source's ordinary turn has none.
	methods, versions := r.mcp.seen()
	turn := []string{"initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call"}
	if want := append(slices.Clone(turn), turn...); !slices.Equal(methods, want) {
		t.Errorf("MCP methods %q; want %q", methods, want)
	}
	t.Logf("initialize asked for protocol versions %q", versions)
}
