// Command agent is the tests' stand-in agent CLI. It speaks MCP with the
// official Go SDK's client the way an agent CLI does: it reads the MCP
// configuration file the profile gives it (-mcp-config, Claude Code's
// format), connects to the server named baton (streamable HTTP with the
// configured headers, or a stdio server it launches with the configured
// environment), lists its tools and calls each one -allowed names
// (mcp__baton__<tool>): submit_session_handoff with -report,
// read_source_history and get_handoff_facts without arguments. It prints
// JSON lines: init (the session id), tools (the names listed), one "tool"
// line per call, then ready and end.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type server struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

type headerRT struct {
	h    map[string]string
	base http.RoundTripper
}

func (t headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func main() {
	prompt := flag.String("prompt", "", "the prompt")
	resume := flag.String("resume", "", "the session to resume")
	flag.String("model", "", "the model")
	flag.Bool("read-only", false, "a report-only turn")
	cfgPath := flag.String("mcp-config", "", "the MCP configuration file")
	allowed := flag.String("allowed", "", "the tools the turn may call, comma-separated")
	report := flag.String("report", "", "the report to submit")
	flag.Parse()
	id := *resume
	if id == "" {
		id = fmt.Sprintf("agent-%d", time.Now().UnixNano())
	}
	emit(map[string]any{"type": "init", "session_id": id})
	emit(map[string]any{"type": "said", "text": "prompt of " + fmt.Sprint(len(*prompt)) + " bytes"})
	if *cfgPath != "" {
		if err := useMCP(*cfgPath, strings.Split(*allowed, ","), *report); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(2)
		}
	}
	emit(map[string]any{"type": "ready"})
	emit(map[string]any{"type": "end"})
}

func useMCP(path string, allowed []string, report string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg struct {
		MCPServers map[string]server `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return err
	}
	s, ok := cfg.MCPServers["baton"]
	if !ok {
		return fmt.Errorf("no baton server in %s", b)
	}
	var t mcp.Transport
	switch s.Type {
	case "http":
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &http.Client{Transport: headerRT{s.Headers, http.DefaultTransport}}}
	case "stdio":
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = os.Stderr
		t = &mcp.CommandTransport{Command: cmd}
	default:
		return fmt.Errorf("server type %q", s.Type)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "v0"}, nil).Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	emit(map[string]any{"type": "tools", "names": names})
	for _, name := range []string{"submit_session_handoff", "read_source_history", "get_handoff_facts"} {
		if !slices.Contains(names, name) || !slices.Contains(allowed, "mcp__baton__"+name) {
			continue
		}
		args := map[string]any{}
		if name == "submit_session_handoff" {
			args["report"] = report
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		var text strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		emit(map[string]any{"type": "tool", "name": name, "is_error": res.IsError, "text": text.String()})
	}
	return nil
}
