package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/facts"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// Tools returns the names of the tools an Access of scope sees.
func Tools(scope Scope) []string {
	return slices.Clone(scopeTools[scope])
}

var scopeTools = map[Scope][]string{ScopeReport: {toolSubmit, toolFacts}, ScopeTarget: {ToolHistory, toolFacts}}

type accessFunc func(*mcp.CallToolRequest) (Access, error)

// mcpServer builds the MCP server of one scope; access tells each call's
// Access.
func (s *Server) mcpServer(scope Scope, access accessFunc) *mcp.Server {
	notDestructive := false
	tools := map[string]*mcp.Tool{
		toolSubmit: {
			Title: "Submit the session handoff report",
			Description: fmt.Sprintf("Submit your handoff report (Markdown, 1 to %d characters) for the session that takes over. "+
				"Call it once: the report is final. Submitting the same text again is harmless; a different text is refused.", baton.MaxReportChars),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"report":{"type":"string",` +
				`"description":"The handoff report in Markdown."}},"required":["report"],"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &notDestructive},
		},
		ToolHistory: {
			Title: "Read the previous session's conversation",
			Description: "Read the conversation of the session you took over from, a page at a time, redacted. " +
				"Start without a cursor; pass the cursor a page returns to read the next one. " +
				"direction is \"oldest-first\" (default) or \"newest-first\"; maxChars bounds the page " +
				fmt.Sprintf("(default %d, %d to %d).", defaultPageChars, minPageChars, maxPageChars),
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"cursor":{"type":"string","description":"The cursor of the previous page; omit to start."},` +
				`"direction":{"type":"string","enum":["oldest-first","newest-first"]},` +
				`"maxChars":{"type":"integer","description":"Page budget in characters."},` +
				`"reportTurns":{"type":"boolean","description":"Also show the turn that asked the previous session for its handoff report, and its answer (left out by default)."}},"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		},
		toolFacts: {
			Title: "Get the facts of the workspace",
			Description: "Get the facts of the workspace gathered without a model: git branch, HEAD, upstream, " +
				"uncommitted files, commits since the previous session started, diffstat, and the checks it ran.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		},
	}
	fns := map[string]toolFunc{toolSubmit: s.submit, ToolHistory: s.history, toolFacts: s.facts}
	srv := mcp.NewServer(&mcp.Implementation{Name: s.cfg.Name, Version: s.cfg.Version}, nil)
	for _, name := range Tools(scope) {
		t := tools[name]
		t.Name = name
		srv.AddTool(t, s.tool(name, scope, access, fns[name]))
	}
	return srv
}

type toolFunc func(ctx context.Context, a Access, args json.RawMessage) (*mcp.CallToolResult, error)

// tool wraps a tool's function: it finds the call's Access, checks it
// belongs to scope (the scope the server offers the tool to), and turns
// every error into a tool error result.
func (s *Server) tool(name string, scope Scope, access accessFunc, fn toolFunc) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := access(req)
		if err == nil && a.Scope != scope {
			err = baton.Errorf(errAccessDenied, "scope %s on the %s endpoint", a.Scope, scope)
		}
		var res *mcp.CallToolResult
		if err == nil {
			res, err = fn(ctx, a, req.Params.Arguments)
		}
		if err != nil {
			return s.refused(name, a, err), nil
		}
		return res, nil
	}
}

// decode reads a JSON object of known fields into dst; absent or null
// arguments leave dst as it is.
func decode(raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if raw[0] != '{' {
		return baton.Errorf(errBadArguments, "the arguments must be a JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		return baton.Errorf(errBadArguments, "%v", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return baton.Errorf(errBadArguments, "trailing data after the arguments")
	}
	return nil
}

func text(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }

// submitted is the structured result of an accepted report.
type submitted struct {
	Stored bool `json:"stored"`
	// Chars is the report's length in characters, after trimming as stored.
	Chars int `json:"chars"`
}

func (s *Server) submit(ctx context.Context, a Access, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args struct {
		Report *string `json:"report"`
	}
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	if args.Report == nil {
		return nil, baton.Errorf(errBadArguments, "the report argument is missing")
	}
	if err := s.co.SubmitReport(ctx, a.Workspace, a.Handoff, a.Token.Reveal(), *args.Report); err != nil {
		return nil, err
	}
	n := utf8.RuneCountInString(strings.TrimSpace(*args.Report))
	return &mcp.CallToolResult{
		Content:           text(fmt.Sprintf("Report stored (%d characters). The handoff goes on without you: end your turn now.", n)),
		StructuredContent: submitted{Stored: true, Chars: n},
	}, nil
}

func (s *Server) history(ctx context.Context, a Access, raw json.RawMessage) (*mcp.CallToolResult, error) {
	var args historyArgs
	if err := decode(raw, &args); err != nil {
		return nil, err
	}
	if _, err := args.check(); err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, a); err != nil {
		return nil, err
	}
	if s.cfg.History == nil {
		return nil, ErrNoHistory
	}
	// The user's choice of what leaves the machine holds for the tool as
	// for the briefing. (A handoff this coordinator does not know is left
	// to Config.History.)
	if ho, err := s.co.Get(ctx, a.Workspace, a.Handoff); err != nil && !errors.Is(err, handoff.ErrNotFound) {
		return nil, err
	} else if err == nil && !ho.Share.Conversation() {
		return nil, baton.Errorf(ErrNoHistory, "the user chose not to share the source conversation (share %q)", ho.Share)
	}
	h, err := s.cfg.History(ctx, a.Workspace, a.Handoff)
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, ErrNoHistory
	}
	clean := s.reds.Get().(cleaner)
	defer s.reds.Put(clean)
	p, err := readHistory(ctx, h, clean, args)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: text(p.Text), StructuredContent: p}, nil
}

func (s *Server) facts(ctx context.Context, a Access, raw json.RawMessage) (*mcp.CallToolResult, error) {
	if err := decode(raw, &struct{}{}); err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, a); err != nil {
		return nil, err
	}
	f, err := s.cfg.Facts(ctx, a.Workspace, a.Handoff)
	if err != nil {
		return nil, err
	}
	clean := s.reds.Get().(cleaner)
	defer s.reds.Put(clean)
	f = redactFacts(f, clean)
	md := cmp.Or(f.Markdown(), "No facts were gathered.")
	return &mcp.CallToolResult{Content: text(md), StructuredContent: f}, nil
}

// gather is the default Config.Facts: facts.Gather in the workspace's root
// since the source session started.
func (s *Server) gather(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (facts.Facts, error) {
	h, err := s.co.Get(ctx, ws, id)
	if err != nil {
		return facts.Facts{}, err
	}
	w, err := s.co.Sessions().Workspace(ctx, ws)
	if err != nil {
		return facts.Facts{}, err
	}
	if w.Root == "" {
		return facts.Facts{Notes: []string{"The workspace has no root directory: no git facts."}}, nil
	}
	var since store.Session
	if h.SourceSession != "" {
		ss, err := session.List[store.Session](ctx, s.co.Sessions(), ws)
		if err != nil {
			return facts.Facts{}, err
		}
		if i := slices.IndexFunc(ss, func(x store.Session) bool { return x.ID == h.SourceSession }); i >= 0 {
			since = ss[i]
		}
	}
	return facts.Gather(ctx, w.Root, since.StartedAt, s.cfg.FactsOptions), nil
}
