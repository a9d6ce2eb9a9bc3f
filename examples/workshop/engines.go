package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff/mcpserver"
)

// realEngines are the agent CLIs -engine can add beside demo.
var realEngines = []string{"claude", "codex"}

// execEngines builds the real engines named in cfg.Engines: each runs its
// agent CLI as a child process per launch (package engine/exec), in the
// workspace's directory, with its transcripts under -data. A Claude
// report-only turn gets this server's MCP endpoint (mcpURL, known once
// listening) with the attempt's credentials in its own headers.
func execEngines(cfg config, log *zap.Logger, mcpURL *atomic.Pointer[string]) (map[string]*exec.Engine, error) {
	out := map[string]*exec.Engine{}
	for _, name := range cfg.Engines {
		var prof exec.Profile
		switch name {
		case "demo":
			continue
		case "claude":
			prof = exec.Claude(exec.ClaudeOptions{Command: cfg.ClaudeBin, MCPServer: mcpserver.DefaultName,
				MCPConfigFor: func(req engine.StartRequest) ([]byte, error) {
					u := mcpURL.Load()
					if u == nil || req.Report == nil {
						return nil, fmt.Errorf("workshop: no MCP endpoint for the report-only turn")
					}
					return mcpserver.ClaudeHTTPConfig(mcpserver.DefaultName, *u, mcpserver.ReportAccess(*req.Report))
				}})
		case "codex":
			// Codex's report-only turn gets no MCP server here: its
			// configuration for one was not checked against the CLI.
			prof = exec.Codex(exec.CodexOptions{Command: cfg.CodexBin})
		default:
			closeAll(out)
			return nil, fmt.Errorf("-engine %q: want demo, %s", name, strings.Join(realEngines, ", "))
		}
		e, err := exec.New(exec.Options{Profile: prof, DataDir: filepath.Join(cfg.Data, "exec", name), Logger: log.Named(name)})
		if err != nil {
			closeAll(out)
			return nil, err
		}
		out[name] = e
	}
	return out, nil
}

func closeAll(es map[string]*exec.Engine) {
	for _, e := range es {
		_ = e.Close(context.Background())
	}
}
