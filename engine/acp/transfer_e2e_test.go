//go:build linux

package acp_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

const (
	acpEngine   = "claude-acp"
	sourceReply = "I fixed the tokenizer in parse.go; TestParse passes now."
)

// mixedRig is a Coordinator over two engines of Claude Code: the exec
// engine's Claude profile ("claude") and the ACP engine on Claude Code's
// adapter (acpEngine), both wired to baton's MCP server by package agent,
// both talking to one scripted Messages API.
type mixedRig struct {
	ctx  context.Context
	host *agent.Host
	acp  *acp.Engine
	ws   baton.WorkspaceID
	api  *clitest.API
}

// acpWiring gives each launch of an ACP engine what package agent's
// Wiring gives a CLI's: baton's MCP server over HTTP with the turn's
// credentials, and its tools allowed.
func acpWiring(host **agent.Host) func(ctx context.Context, req engine.StartRequest) (acp.Launch, error) {
	return func(ctx context.Context, req engine.StartRequest) (acp.Launch, error) {
		h := *host
		l, ok, err := h.Wiring.For(ctx, req)
		if err != nil || !ok {
			return acp.Launch{}, err
		}
		return acp.Launch{MCPServers: []sdk.McpServer{acp.HTTPServer(l.Name, l.URL, l.Access.Header())}, Allow: l.Tools}, nil
	}
}

func newMixedRig(t *testing.T, report string) *mixedRig {
	t.Helper()
	claudeBin, adapterBin := clitest.ClaudeBin(t), claudeAdapterBin(t)
	r := &mixedRig{ctx: clitest.Ctx(t, 6*time.Minute), ws: "ws-1"}
	r.api = clitest.NewMessages(t, clitest.Transfer{Reply: sourceReply, Report: report}.Script())
	root := t.TempDir()
	work := clitest.Dir(t, root, "work")
	var host *agent.Host
	var err error
	if r.acp, err = acp.New(acp.Options{Name: acpEngine, Command: adapterBin, Env: r.api.ClaudeEnv(clitest.Dir(t, root, "acp-home")),
		DataDir: clitest.Dir(t, root, "acp"), StopGrace: 5 * time.Second, Launch: acpWiring(&host)}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	timeout := 2 * time.Minute
	host, err = agent.New(memstore.New(), agent.Config{
		Addr: hs.Listener.Addr().String(), DataDir: clitest.Dir(t, root, "data"),
		Claude:  &exec.ClaudeOptions{Command: claudeBin},
		Exec:    exec.Options{Env: r.api.ClaudeEnv(clitest.Dir(t, root, "home")), StopGrace: 2 * time.Second},
		Engines: map[string]engine.Engine{acpEngine: r.acp},
		Handoff: []handoff.Option{handoff.WithTimeouts(handoff.Timeouts{Generation: timeout, Ready: timeout})},
		// The history tool reads either engine's transcript: both are in
		// package exec's format.
		MCP: mcpserver.Config{History: func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
			h, err := host.Coordinator.Get(ctx, ws, id)
			if err != nil {
				return nil, err
			}
			if h.SourceConfig.Engine == acpEngine {
				return fileHistory(r.acp.TranscriptPath(h.SourceSession)), nil
			}
			return fileHistory(host.Claude.TranscriptPath(h.SourceSession)), nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.host = host
	clitest.Cleanup(t, "Close", func(ctx context.Context) error { return errors.Join(host.Close(ctx), r.acp.Close(ctx)) })
	mux.Handle(agent.MCPPath, host.Handler())
	if _, err := host.Coordinator.Sessions().CreateWorkspace(r.ctx, store.Workspace{ID: r.ws, Root: work, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: agent.Claude}}); err != nil {
		t.Fatal(err)
	}
	return r
}

// idle waits until no process of the workspace runs.
func (r *mixedRig) idle(t *testing.T) {
	t.Helper()
	for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
		if _, running := r.host.Coordinator.Sessions().Running(r.ws); !running {
			return
		}
		select {
		case <-r.ctx.Done():
			t.Fatal("the workspace's process did not end")
		case <-time.After(d):
		}
	}
}

// transfer hands src to a fresh session on target with a report and
// waits for it to settle.
func (r *mixedRig) transfer(t *testing.T, id string, src baton.SessionID, target string) store.Handoff {
	t.Helper()
	h, err := r.host.Coordinator.Create(r.ctx, handoff.Request{Workspace: r.ws, RequestID: id, SourceSession: src,
		GenerateSummary: true, Target: baton.EngineConfig{Engine: target}})
	if err != nil {
		t.Fatal(err)
	}
	if h, err = r.host.Coordinator.Wait(r.ctx, r.ws, h.ID); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	r.idle(t)
	return h
}

// firstPrompt is the user message that opened session sid in its engine's
// transcript.
func firstPrompt(t *testing.T, tr func(context.Context, baton.SessionID) (iter.Seq2[transcript.Event, error], error), sid baton.SessionID) string {
	t.Helper()
	seq, err := tr(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Speaker == transcript.User && ev.Kind == transcript.Message {
			return ev.Text
		}
	}
	return ""
}

// TestTransferAcrossProtocols hands a session of Claude Code driven by
// the exec engine to one driven through its ACP adapter, and back: each
// transfer's report-only turn submits its report over MCP (the ACP one
// receives baton's server in session/load's mcpServers and the engine
// allows its tools), each completes, and each target's briefing carries
// the source's conversation, read from the source engine's transcript.
func TestTransferAcrossProtocols(t *testing.T) {
	const report = "Parser fixed; TestParse passes."
	r := newMixedRig(t, report)
	co := r.host.Coordinator
	src, err := co.Sessions().Start(r.ctx, session.TurnRequest{Workspace: r.ws, Prompt: "Fix the parser in parse.go."})
	if err != nil {
		t.Fatal(err)
	}
	r.idle(t)

	h := r.transfer(t, "to-acp", src.ID, acpEngine)
	if h.State != store.StateCompleted || h.Report != report {
		t.Fatalf("exec -> acp settled %s (%s), report %q", h.State, h.Error, h.Report)
	}
	brief := firstPrompt(t, r.acp.Transcript, h.TargetSession)
	for _, want := range []string{"Fix the parser in parse.go.", sourceReply, report} {
		if !strings.Contains(brief, want) {
			t.Errorf("the ACP target's briefing lacks %q:\n%s", want, brief)
		}
	}

	back := r.transfer(t, "to-exec", h.TargetSession, agent.Claude)
	if back.State != store.StateCompleted || back.Report != report {
		t.Fatalf("acp -> exec settled %s (%s), report %q", back.State, back.Error, back.Report)
	}
	brief = firstPrompt(t, r.host.Claude.Transcript, back.TargetSession)
	if !strings.Contains(brief, "Fix the parser in parse.go.") || !strings.Contains(brief, "Done.") {
		t.Errorf("the exec target's briefing lacks the ACP session's conversation:\n%s", brief)
	}
	// The ACP source's report-only turn is marked in its transcript.
	var reportOnly int
	seq, _ := r.acp.Transcript(r.ctx, h.TargetSession)
	for ev := range seq {
		if ev.Turn == transcript.ReportOnly {
			reportOnly++
		}
	}
	if reportOnly == 0 {
		t.Error("the ACP session's report-only turn is not marked in its transcript")
	}
}

// fileHistory is an mcpserver.History over the transcript at its path,
// opened for each call (package exec's format, which this engine writes).
type fileHistory string

func (p fileHistory) Len(ctx context.Context) (n int64, err error) {
	t, err := tlog.OpenReader(string(p))
	if err != nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	return t.Len(ctx)
}

func (p fileHistory) Events(ctx context.Context, from int64, n int) (evs []transcript.Event, err error) {
	t, err := tlog.OpenReader(string(p))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, t.Close()) }()
	return t.Events(ctx, from, n)
}
