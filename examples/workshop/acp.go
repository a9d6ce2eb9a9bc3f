package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
)

// acpPrefix starts an -engine entry that names an ACP agent:
// acp:NAME=COMMAND, the command line split on white space (so no comma in
// it: -engine is comma-separated).
const acpPrefix = "acp:"

// parseACP splits an acp:NAME=COMMAND entry; ok is false for any other
// entry.
func parseACP(entry string) (name string, argv []string, ok bool, err error) {
	rest, ok := strings.CutPrefix(entry, acpPrefix)
	if !ok {
		return "", nil, false, nil
	}
	name, cmd, found := strings.Cut(rest, "=")
	name, argv = strings.TrimSpace(name), strings.Fields(cmd)
	if !found || name == "" || len(argv) == 0 {
		return "", nil, true, fmt.Errorf("-engine %q: want acp:NAME=COMMAND", entry)
	}
	if name == "demo" || name == agent.Claude || name == agent.Codex {
		return "", nil, true, fmt.Errorf("-engine %q: the name %q is taken", entry, name)
	}
	return name, argv, true, nil
}

// addACP registers the ACP agent of an acp:NAME=COMMAND entry in acfg: an
// engine/acp engine on the command, its transcripts under -data, each
// launch given baton's MCP server with the turn's grant (as package agent
// wires the CLIs), once s.agents exists.
func (s *server) addACP(acfg *agent.Config, entry string) error {
	name, argv, _, err := parseACP(entry)
	if err != nil {
		return err
	}
	if _, dup := acfg.Engines[name]; dup {
		return fmt.Errorf("-engine %q: %q is registered twice", entry, name)
	}
	e, err := acp.New(acp.Options{Name: name, Command: argv[0], Args: argv[1:], DataDir: filepath.Join(s.cfg.Data, "acp", name),
		Logger: s.log.Named(name), Launch: s.acpLaunch})
	if err != nil {
		return err
	}
	acfg.Engines[name] = e
	s.acp = append(s.acp, e)
	return nil
}

// acpLaunch gives an ACP launch what package agent's Wiring gives a CLI's.
func (s *server) acpLaunch(ctx context.Context, req engine.StartRequest) (acp.Launch, error) {
	l, ok, err := s.agents.Wiring.For(ctx, req)
	if err != nil || !ok {
		return acp.Launch{}, err
	}
	return acp.Launch{MCPServers: []sdk.McpServer{acp.HTTPServer(l.Name, l.URL, l.Access.Header())}, Allow: l.Tools}, nil
}

// closeACP closes the ACP engines (a confirmed stop of each launch).
func (s *server) closeACP(ctx context.Context) error {
	var errs []error
	for _, e := range s.acp {
		errs = append(errs, e.Close(ctx))
	}
	return errors.Join(errs...)
}
