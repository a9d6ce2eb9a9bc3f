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

const sourceReply = "I fixed the tokenizer in parse.go; TestParse passes now."

// TestClaudeTransferOverMCP drives the real Claude Code CLI, registered by
// New (Config.Claude), through a transfer with GenerateSummary on a Coordinator:
// the report-only turn calls mcp__baton__submit_session_handoff on baton's
// MCP server (HTTP on 127.0.0.1) with the attempt's credentials, the
// transfer completes with that report, and the target's first turn calls
// mcp__baton__read_source_history, whose page (the source conversation,
// redacted) the CLI sends to the API in its next request.
func TestClaudeTransferOverMCP(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api := clitest.NewMessages(t, e2eScript(e2eReport))
	r := transferE2E(t, rigOpts{engine: agent.Claude, model: "claude-test-1", env: api.ClaudeEnv(clitest.Home(t)),
		claude: &exec.ClaudeOptions{Command: bin}}, api, "claude-test-2", "mcp__baton__")

	// The tools each turn was offered: the report scope's during the
	// report-only turn, the target scope's afterwards, none before.
	offered := offeredTools(api, "mcp__baton__")
	want := map[string]bool{
		"": true, // the source's turn
		"mcp__baton__get_handoff_facts,mcp__baton__submit_session_handoff": true,
		"mcp__baton__get_handoff_facts,mcp__baton__read_source_history":    true,
	}
	seen := map[string]bool{}
	for _, o := range offered {
		k := strings.Join(o, ",")
		if !want[k] {
			t.Errorf("a request offered the baton tools %q", k)
		}
		seen[k] = true
	}
	if len(seen) != len(want) {
		t.Errorf("tool sets offered: %v; want each of %v", seen, want)
	}

	// The MCP exchange: initialize (protocol 2025-11-25), tools/list and
	// tools/call, each turn on its own connection.
	methods, versions := r.mcp.seen()
	for _, m := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call"} {
		if !slices.Contains(methods, m) {
			t.Errorf("the CLI never sent %s: %q", m, methods)
		}
	}
	if len(versions) < 2 || slices.ContainsFunc(versions, func(v string) bool { return v != "2025-11-25" }) {
		t.Errorf("initialize asked for protocol versions %q; want 2025-11-25 at each turn", versions)
	}
}
