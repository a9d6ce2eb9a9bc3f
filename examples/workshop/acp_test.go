package main

import (
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseACP(t *testing.T) {
	for _, tc := range []struct {
		entry, name string
		argv        []string
		ok, bad     bool
	}{
		{"claude", "", nil, false, false},
		{"acp:gemini=gemini --experimental-acp", "gemini", []string{"gemini", "--experimental-acp"}, true, false},
		{"acp:gemini", "", nil, true, true},
		{"acp:=gemini", "", nil, true, true},
		{"acp:x=", "", nil, true, true},
		{"acp:claude=claude-agent-acp", "", nil, true, true},
	} {
		name, argv, ok, err := parseACP(tc.entry)
		if name != tc.name || strings.Join(argv, " ") != strings.Join(tc.argv, " ") || ok != tc.ok || (err != nil) != tc.bad {
			t.Errorf("parseACP(%q) = %q, %q, %v, %v", tc.entry, name, argv, ok, err)
		}
	}
}

// TestACPEngine runs the workshop with -engine acp:scripted=<the scripted
// ACP agent of engine/acp's tests>: a session of a workspace on it runs
// its turn through the ACP engine and records the agent's session id.
func TestACPEngine(t *testing.T) {
	agentBin := filepath.Join(t.TempDir(), "agent")
	build := osexec.Command("go", "build", "-o", agentBin, "../../engine/acp/testdata/agent")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	p := startBinaryEnv(t, "", []string{"PATH=" + os.Getenv("PATH"), "ACPAGENT_DIR=" + t.TempDir()}, "-engine", "acp:scripted="+agentBin)
	r := p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "acp", "engine": "scripted"})
	ws := str(r.Body, "workspace", "id")
	p.session(ws)
	p.waitIdle(ws)
	r = p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil)
	if !strings.Contains(string(r.Raw), `"sess-`) {
		t.Errorf("the session did not record the ACP agent's session id: %s", r.Raw)
	}
}
