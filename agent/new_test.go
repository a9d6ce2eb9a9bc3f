//go:build linux

package agent_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/store/memstore"
)

func TestNewConfig(t *testing.T) {
	dir := t.TempDir()
	claude := &exec.ClaudeOptions{Command: "claude"}
	for _, tc := range []struct {
		name string
		cfg  agent.Config
		err  error
	}{
		{"claude", agent.Config{Addr: "127.0.0.1:8417", DataDir: dir, Claude: claude}, nil},
		{"localhost", agent.Config{Addr: "localhost:8417", DataDir: dir, Codex: &exec.CodexOptions{}}, nil},
		{"ipv6 loopback", agent.Config{Addr: "[::1]:8417", DataDir: dir, Claude: claude}, nil},
		{"engines only", agent.Config{Addr: "127.0.0.1:8417", DataDir: dir, Engines: map[string]engine.Engine{"demo": enginetest.New(enginetest.Options{})}}, nil},
		{"no addr", agent.Config{DataDir: dir, Claude: claude}, agent.ErrBadConfig},
		{"port 0", agent.Config{Addr: "127.0.0.1:0", DataDir: dir, Claude: claude}, agent.ErrBadConfig},
		{"beyond loopback", agent.Config{Addr: "0.0.0.0:8417", DataDir: dir, Claude: claude}, agent.ErrBadConfig},
		{"a name", agent.Config{Addr: "example.com:8417", DataDir: dir, Claude: claude}, agent.ErrBadConfig},
		{"no data dir", agent.Config{Addr: "127.0.0.1:8417", Claude: claude}, agent.ErrBadConfig},
		{"no engine", agent.Config{Addr: "127.0.0.1:8417", DataDir: dir}, agent.ErrBadConfig},
		{"a CLI's name taken", agent.Config{Addr: "127.0.0.1:8417", DataDir: dir, Claude: claude,
			Engines: map[string]engine.Engine{agent.Claude: enginetest.New(enginetest.Options{})}}, agent.ErrBadConfig},
		{"a bad server name", agent.Config{Addr: "127.0.0.1:8417", DataDir: dir, Claude: claude, Name: "ba ton"}, agent.ErrBadConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := agent.New(memstore.New(), tc.cfg)
			if (tc.err == nil) != (err == nil) || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Fatalf("New = %v; want %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if err := h.Close(testCtx(t, 30*time.Second)); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestKitToolNames: the test kit's scripted agent calls the tools by the
// server's names.
func TestKitToolNames(t *testing.T) {
	report, target := mcpserver.Tools(mcpserver.ScopeReport), mcpserver.Tools(mcpserver.ScopeTarget)
	if !slices.Equal(report, []string{clitest.ToolSubmit, clitest.ToolFacts}) || !slices.Equal(target, []string{clitest.ToolHistory, clitest.ToolFacts}) {
		t.Errorf("clitest's tool names %q, %q, %q differ from mcpserver's %q and %q", clitest.ToolSubmit, clitest.ToolHistory, clitest.ToolFacts, report, target)
	}
}

// TestHandler: the MCP server is served at MCPPath only, and Endpoint
// names it at Addr.
func TestHandler(t *testing.T) {
	h, err := agent.New(memstore.New(), agent.Config{Addr: "127.0.0.1:8417", DataDir: t.TempDir(), Claude: &exec.ClaudeOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(testCtx(t, 30*time.Second))
	if h.Endpoint() != "http://127.0.0.1:8417/mcp" {
		t.Errorf("Endpoint = %q", h.Endpoint())
	}
	if h.Claude == nil || h.Codex != nil || h.CLI(agent.Claude) != h.Claude || h.Wiring == nil || h.MCP == nil || h.Coordinator == nil || h.Engines == nil {
		t.Errorf("the Host's parts: %+v", h)
	}
	for path, want := range map[string]int{"/mcp": http.StatusBadRequest, "/": http.StatusNotFound, "/mcp/x": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		h.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
		if rec.Code != want {
			t.Errorf("POST %s without access headers = %d; want %d", path, rec.Code, want)
		}
	}
}
