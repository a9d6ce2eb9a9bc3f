package agent

import (
	"cmp"
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// ErrBadConfig: New got an unusable configuration.
var ErrBadConfig = baton.NewError(baton.ErrInvalid, "agent: invalid configuration")

// MCPPath is the path at which Host.Handler serves baton's MCP server:
// the agent CLIs reach it at http://<Config.Addr>/mcp.
const MCPPath = "/mcp"

// The engine names the CLIs are registered under, in
// baton.EngineConfig.Engine.
const (
	Claude = "claude"
	Codex  = "codex"
)

// Config says which agent CLIs a Host runs and where it serves its MCP
// server.
type Config struct {
	// Addr is the loopback address (host:port, the port not 0) at which
	// the program serves Handler; the CLIs' MCP configurations point at
	// http://Addr/mcp. Listen first (net.Listen("tcp", "127.0.0.1:0"))
	// and pass the listener's address to have the system choose a port.
	// Required.
	Addr string
	// DataDir holds each CLI engine's transcripts and launch files, in
	// DataDir/<engine name>. Required.
	DataDir string
	// Claude, when set, registers the Claude Code CLI as the engine
	// "claude" (exec.Claude on these options, wired to the MCP server as
	// the package doc says).
	Claude *exec.ClaudeOptions
	// Codex, when set, registers the Codex CLI as the engine "codex"
	// (exec.Codex on these options, wired to the MCP server as the package
	// doc says).
	Codex *exec.CodexOptions
	// Profiles are more CLIs, by engine name, each run by an exec engine
	// of its own on the profile the function returns: build it with
	// Wiring.Profile, so that its launches get their MCP configuration,
	// and the target of a transfer from it reads its transcript.
	Profiles map[string]func(w *Wiring) exec.Profile
	// Exec are the other options of the CLI engines (Env, StopGrace,
	// DeathSignal, Clock, ...); New sets Profile and DataDir, and Logger
	// when it is nil.
	Exec exec.Options
	// Engines are more engines to register beside the CLIs, by name (a
	// scripted engine for demos, say). A name of a CLI asked for is
	// refused.
	Engines map[string]engine.Engine
	// Sessions are the options of the Coordinator's session service
	// (InstanceID, a stable one on a shared store; Clock, timeouts, ...);
	// New sets Logger when it is nil.
	Sessions session.Options
	// Briefing says how a transfer's target is briefed (its Build, Facts,
	// ...). New sets HistoryTool (read_source_history: a briefing without
	// the conversation points the target at the tool it is granted) when
	// it is blank, and the Secrets and Markers of Limits.Conversation to
	// those of MCP.Limits (the briefing redacts what the history tool
	// redacts).
	Briefing handoff.Briefing
	// Handoff are more options of the Coordinator (WithObserver,
	// WithTimeouts, ...), given after New's own WithBriefing (Briefing).
	Handoff []handoff.Option
	// MCP configures the MCP server (its Limits, Facts, Version, ...);
	// New sets Coordinator, History when it is nil (the source's transcript
	// in the engine it ran on: a CLI engine, or an engine of Engines that
	// keeps transcript files, such as an ACP engine), and Logger when it
	// is nil.
	MCP mcpserver.Config
	// Name is the MCP server's name in the CLIs' configurations; "baton"
	// when empty. Claude Code calls its tools mcp__<Name>__<tool>.
	Name string
	// Bridge, when set, is the command line of the program's stdio bridge
	// subcommand (a program and its arguments; the program calls
	// mcpserver.Bridge with its environment): Claude Code then reaches the
	// server through it. Codex always reaches Addr itself.
	Bridge []string
	// Bearer, when set, is a bearer token the MCP endpoint requires:
	// Handler answers 401 to a request without "Authorization: Bearer
	// <Bearer>", and every CLI's MCP configuration carries it, so that a
	// host that guards its own API with a token guards /mcp with the same
	// one. Zero: the endpoint checks only each turn's own credentials.
	Bearer baton.Token
	// Logger receives the engines', the Coordinator's and the MCP
	// server's logs, named by part; nil means zap.NewNop.
	Logger *zap.Logger
}

// Host is the wiring of real agent CLIs to baton: the exec engines, the
// MCP server, the Wiring between them, and the Coordinator over them.
// Every part is reachable for what New does not cover. Safe for
// concurrent use.
type Host struct {
	// Coordinator drives the transfers; Coordinator.Sessions runs the
	// ordinary turns.
	Coordinator *handoff.Coordinator
	// Engines is the registry the Coordinator launches through: the CLIs
	// and Config.Engines.
	Engines engine.Registry
	// Claude and Codex are the CLI engines; nil for a CLI not asked for.
	// Engines.Lookup finds the engine of a profile of Config.Profiles.
	Claude, Codex *exec.Engine
	// MCP is baton's MCP server, served by Handler.
	MCP *mcpserver.Server
	// Wiring renders each launch's MCP configuration.
	Wiring *Wiring

	clis    map[string]*exec.Engine
	handler http.Handler
}

// New builds, on st, the CLI engines cfg asks for (each wired to the MCP
// server: a report-only turn gets the report tools with its attempt's
// credentials, a transfer's target gets read_source_history on the
// source's conversation), the Coordinator over them, and the MCP server.
// The program then serves Handler at cfg.Addr and, when it serves st
// alone, calls Coordinator.Recover once before its first transfer. st
// stays the caller's: Close does not close it.
//
// Errors: ErrBadConfig (no Addr, one beyond loopback or with port 0, no
// DataDir, no engine at all, an engine name taken twice, a bad Name), the
// exec engines', handoff.New's and mcpserver.New's errors. On an error
// nothing is left running.
func New(st store.Store, cfg Config) (_ *Host, err error) {
	w, err := newWiring(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.DataDir == "" {
		return nil, baton.Errorf(ErrBadConfig, "no DataDir")
	}
	if cfg.Claude == nil && cfg.Codex == nil && len(cfg.Profiles) == 0 && len(cfg.Engines) == 0 {
		return nil, baton.Errorf(ErrBadConfig, "no engine: set Claude, Codex, Profiles or Engines")
	}
	log := cmp.Or(cfg.Logger, zap.NewNop())
	h := &Host{Wiring: w}
	defer func() { // undo a New that failed
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = h.Close(ctx)
		}
	}()
	profiles := map[string]exec.Profile{}
	if cfg.Claude != nil {
		profiles[Claude] = w.claude(*cfg.Claude)
	}
	if cfg.Codex != nil {
		profiles[Codex] = w.codex(*cfg.Codex)
	}
	for name, p := range cfg.Profiles {
		if _, dup := profiles[name]; dup || p == nil || name == "" {
			return nil, baton.Errorf(ErrBadConfig, "the profile %q is empty, nil or registered twice", name)
		}
		profiles[name] = p(w)
	}
	h.clis = map[string]*exec.Engine{}
	reg := map[string]engine.Engine{}
	for name, p := range profiles {
		o := cfg.Exec
		o.Profile, o.DataDir = p, filepath.Join(cfg.DataDir, name)
		o.Logger = cmp.Or(o.Logger, log.Named(name))
		e, err := exec.New(o)
		if err != nil {
			return nil, err
		}
		h.clis[name], reg[name] = e, e
	}
	h.Claude, h.Codex = h.clis[Claude], h.clis[Codex]
	for name, e := range cfg.Engines {
		if _, dup := reg[name]; dup || e == nil {
			return nil, baton.Errorf(ErrBadConfig, "the engine %q is registered twice, or nil", name)
		}
		reg[name] = e
	}
	h.Engines = engine.Registry(reg)
	// The targets are granted read_source_history, and the briefing
	// redacts what the MCP server redacts.
	so := cfg.Sessions
	so.Logger = cmp.Or(so.Logger, log.Named("handoff"))
	b := cfg.Briefing
	b.HistoryTool = cmp.Or(b.HistoryTool, mcpserver.ToolHistory)
	b.Limits.Conversation.Secrets, b.Limits.Conversation.Markers = cfg.MCP.Limits.Secrets, cfg.MCP.Limits.Markers
	svc, err := session.New(st, h.Engines, so)
	if err != nil {
		return nil, err
	}
	opts := append([]handoff.Option{handoff.WithBriefing(b)}, cfg.Handoff...)
	if h.Coordinator, err = handoff.New(svc, h.Engines, opts...); err != nil {
		return nil, err
	}
	mc := cfg.MCP
	mc.Coordinator = h.Coordinator
	if mc.History == nil {
		mc.History = history(h.Coordinator, h.Engines)
	}
	mc.Logger = cmp.Or(mc.Logger, log.Named("mcp"))
	if h.MCP, err = mcpserver.New(mc); err != nil {
		return nil, err
	}
	w.attach(h.Coordinator, h.MCP)
	mcp := h.MCP.Handler()
	h.handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != MCPPath {
			http.NotFound(rw, r)
			return
		}
		if !cfg.Bearer.IsZero() && !BearerOK(r, cfg.Bearer) {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="baton mcp"`)
			http.Error(rw, "a bearer token is required", http.StatusUnauthorized)
			return
		}
		mcp.ServeHTTP(rw, r)
	})
	return h, nil
}

// BearerOK reports whether r carries "Authorization: Bearer <want>",
// compared in constant time.
func BearerOK(r *http.Request, want baton.Token) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want.Reveal())) == 1
}

// endpointOf checks a loopback host:port and returns its MCP URL.
func endpointOf(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", baton.Errorf(ErrBadConfig, "Addr %q: %v", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", baton.Errorf(ErrBadConfig, "Addr %q: want a port 1-65535 (listen first to have one chosen)", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", baton.Errorf(ErrBadConfig, "Addr %q: the MCP server carries the agents' tokens in the clear and serves loopback only", addr)
	}
	return "http://" + net.JoinHostPort(host, port) + MCPPath, nil
}

// Handler returns the HTTP handler to serve at Config.Addr: baton's MCP
// server at MCPPath (every other path is 404), so that it can be served
// alone (http.Serve(ln, h.Handler())) or mounted on a mux of the
// program's own (mux.Handle(agent.MCPPath, h.Handler())).
func (h *Host) Handler() http.Handler { return h.handler }

// Idle waits until no process of the Coordinator runs in workspace ws
// (its turn ended), reading the session service's table of running
// processes with a short backoff. Errors: ctx's.
func (h *Host) Idle(ctx context.Context, ws baton.WorkspaceID) error {
	for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
		if _, running := h.Coordinator.Sessions().Running(ws); !running {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d): // collected once it fires or is dropped
		}
	}
}

// Close shuts the Coordinator down (pending transfers become interrupted)
// and closes the CLI engines, within ctx; Config.Engines and the store are
// the caller's to close. Errors: those of Coordinator.Shutdown and
// exec.Engine.Close, joined.
func (h *Host) Close(ctx context.Context) error {
	var errs []error
	if h.Coordinator != nil {
		errs = append(errs, h.Coordinator.Shutdown(ctx))
	}
	for _, e := range h.clis {
		errs = append(errs, e.Close(ctx))
	}
	return errors.Join(errs...)
}

// transcriptHistory is an mcpserver.History over the transcript file at
// Path (exec.Engine.TranscriptPath). Each call opens the transcript, reads
// through its offset index and closes it, so it holds no file between
// calls and sees the events a live launch appended since. Safe for
// concurrent use.
type transcriptHistory struct {
	Path string
}

// Len implements mcpserver.History. Errors: an error matching
// baton.ErrNotFound when there is no transcript, ctx's, or the file
// system's.
func (h transcriptHistory) Len(ctx context.Context) (int64, error) {
	return read(h.Path, func(r *tlog.Reader) (int64, error) { return r.Len(ctx) })
}

// Events implements mcpserver.History. Errors: those of Len, baton.ErrInvalid
// for a negative from or n, or an error matching baton.ErrInternal for a
// corrupt transcript.
func (h transcriptHistory) Events(ctx context.Context, from int64, n int) ([]transcript.Event, error) {
	return read(h.Path, func(r *tlog.Reader) ([]transcript.Event, error) { return r.Events(ctx, from, n) })
}

// read opens the transcript at path, calls f on it and closes it.
func read[T any](path string, f func(*tlog.Reader) (T, error)) (v T, err error) {
	r, err := tlog.OpenReader(path)
	if err != nil {
		return v, err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	return f(r)
}

// history returns the function mcpserver.Config.History wants: the
// handoff's source session, read from its transcript in the engine of reg
// its configuration names (SourceConfig.Engine), when that engine keeps
// transcript files (the CLI engines, and an ACP engine of Config.Engines).
// A handoff with no source session, or whose source ran on an engine that
// keeps none (or left no transcript there), has no history: the tool then
// refuses with mcpserver.ErrNoHistory. Errors: the Coordinator's
// (handoff.ErrNotFound).
func history(co *handoff.Coordinator, reg engine.Registry) func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
	return func(ctx context.Context, ws baton.WorkspaceID, id baton.HandoffID) (mcpserver.History, error) {
		h, err := co.Get(ctx, ws, id)
		if err != nil {
			return nil, err
		}
		if h.SourceSession == "" {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the handoff %s has no source session", id)
		}
		e := reg[h.SourceConfig.Engine]
		// An engine that keeps each session's transcript in a file of
		// package exec's format: exec's engines and package acp's.
		files, ok := e.(interface{ TranscriptPath(baton.SessionID) string })
		if !ok {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the source session %s ran on the engine %q, which keeps no transcript here", h.SourceSession, h.SourceConfig.Engine)
		}
		th := transcriptHistory{Path: files.TranscriptPath(h.SourceSession)}
		if _, err := th.Len(ctx); errors.Is(err, baton.ErrNotFound) {
			return nil, baton.Errorf(mcpserver.ErrNoHistory, "the source session %s has no transcript here", h.SourceSession)
		} else if err != nil {
			return nil, err
		}
		return th, nil
	}
}
