package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// inspector returns the MCP Inspector's executable (BATON_MCP_INSPECTOR,
// which .ci/run sets, else mcp-inspector on PATH); the test skips without
// it, and fails under CI=true.
func inspector(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BATON_MCP_INSPECTOR"); p != "" {
		return p
	}
	if p, err := exec.LookPath("mcp-inspector"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no MCP Inspector: set BATON_MCP_INSPECTOR (npm @modelcontextprotocol/inspector@0.15.0)")
	}
	t.Skip("no MCP Inspector: set BATON_MCP_INSPECTOR to its mcp-inspector (npm @modelcontextprotocol/inspector@0.15.0)")
	return ""
}

// TestInspectorThroughTheBridgeCommand runs the MCP Inspector's command
// line against cmd/baton-mcp-bridge, which forwards to a real endpoint:
// tools/list, then a tools/call that succeeds.
func TestInspectorThroughTheBridgeCommand(t *testing.T) {
	insp := inspector(t)
	bin := filepath.Join(t.TempDir(), "baton-mcp-bridge")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/batonhq/baton/cmd/baton-mcp-bridge").CombinedOutput(); err != nil {
		t.Fatalf("building the bridge: %v\n%s", err, out)
	}
	f := newFixture(t, fixtureOpts{})
	srv, err := mcpserver.New(mcpserver.Config{Coordinator: f.co, Facts: func(_ context.Context, _ baton.WorkspaceID, id baton.HandoffID) (facts.Facts, error) {
		return facts.Facts{Notes: []string{"gathered for " + string(id)}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	acc := srv.GrantTarget(f.ws, "hof-7")
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		all := []string{"--cli"}
		for _, kv := range acc.Environ(hs.URL) {
			all = append(all, "-e", kv)
		}
		all = append(all, bin)
		all = append(all, args...)
		out, err := exec.CommandContext(ctx, insp, all...).CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	list := run("--method", "tools/list")
	for _, tool := range []string{mcpserver.ToolFacts, mcpserver.ToolHistory} {
		if !strings.Contains(list, `"`+tool+`"`) {
			t.Errorf("tools/list lacks %s:\n%s", tool, list)
		}
	}
	called := run("--method", "tools/call", "--tool-name", mcpserver.ToolFacts)
	if !strings.Contains(called, "gathered for hof-7") || strings.Contains(called, `"isError": true`) {
		t.Fatalf("tools/call %s:\n%s", mcpserver.ToolFacts, called)
	}
}
