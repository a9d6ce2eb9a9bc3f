package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/handoff/mcpserver"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/store/pgstore"
)

// config is what the flags and BATON_* variables set.
type config struct {
	Addr  string
	Data  string
	Store string // "" or "badger": badger in Data; "memory"; a postgres:// URL (shared by replicas)
	// Instance is the coordinator's instance id on a shared (PostgreSQL)
	// store: distinct per replica, the same across a replica's restarts.
	// Empty means host name and process id.
	Instance string
	// LeaseTTL is how long a replica's lease on the transfer it drives
	// lasts without renewal; on a shared store, Reconcile runs this often.
	LeaseTTL time.Duration
	LogLevel string
	NoSync   bool     // badger's Options.NoSync
	Token    string   // bearer token; required beyond loopback
	Hosts    []string // extra Host names allowed besides the listen address and loopback names
	Demo     DemoTimings
	// Engines are the engines to register: demo and the real ones
	// (claude, codex); demo is always registered.
	Engines   []string
	ClaudeBin string
	CodexBin  string
	// MCPAddr is the loopback address (host:port) at which the agent CLIs
	// reach this server's MCP endpoint: run sets it once listening.
	MCPAddr string
	// Grace bounds how long a shutdown waits for processes to confirm
	// their stop; what is left then is ended and left to the next start's
	// reconciliation.
	Grace time.Duration
	// Heartbeat is the SSE comment interval.
	Heartbeat time.Duration
	// BodyTimeout bounds the reading of a request body, IdleTimeout how
	// long a kept-alive connection waits for its next request.
	BodyTimeout, IdleTimeout time.Duration
	// MaxStreams caps the open event streams (all clients together: every
	// local client is 127.0.0.1); past it a stream is refused with 503
	// too-many-streams. StreamWriteTimeout bounds each write to a stream:
	// a reader that stalls that long is dropped.
	MaxStreams         int
	StreamWriteTimeout time.Duration
	// Pressure is the context-pressure threshold of the workspaces created
	// without a policy of their own (0: off); see pressureJSON.
	Pressure float64
}

// Defaults of the connection bounds (flags -body-timeout, -idle-timeout,
// -max-streams, -stream-write-timeout).
const (
	defaultBodyTimeout        = 10 * time.Second
	defaultIdleTimeout        = 2 * time.Minute
	defaultMaxStreams         = 256
	defaultStreamWriteTimeout = 10 * time.Second
	// headerTimeout bounds the reading of a request's headers.
	headerTimeout = 10 * time.Second
)

// httpServer is the HTTP server of the routes, with its connection bounds:
// headers and bodies must arrive in time (bodies per request: see
// bodyDeadline), idle connections are closed; there is no write timeout
// for the server as a whole, which would cut the event streams: each
// stream bounds its own writes.
func (s *server) httpServer() *http.Server {
	return &http.Server{Handler: s.routes(), ReadHeaderTimeout: headerTimeout, IdleTimeout: s.cfg.IdleTimeout,
		ErrorLog: zap.NewStdLog(s.log.Named("http"))}
}

// server is the workshop: the SDK's coordinator and session service over
// one store, and the HTTP API and page in front of them.
type server struct {
	cfg     config
	log     *zap.Logger
	st      store.Store
	demo    *demoEngine
	agents  *agent.Host   // the agent CLIs, the MCP server and the coordinator, wired
	acp     []*acp.Engine // the ACP agents of -engine acp:NAME=COMMAND
	engines engine.Registry
	svc     *session.Service
	co      *handoff.Coordinator
	mcp     *mcpserver.Server

	ready atomic.Bool
	hosts map[string]bool
	// streams counts the open event streams (see config.MaxStreams).
	streams atomic.Int64

	// base is cancelled on shutdown: SSE streams and background loops end.
	base   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	nudgeMu sync.Mutex
	nudging map[baton.WorkspaceID]bool
}

// realEngines are the agent CLIs -engine can add beside demo.
var realEngines = []string{agent.Claude, agent.Codex}

// newServer opens the store, wires the engines, the coordinator and the
// MCP server (package agent: each CLI's report-only turn and its target's
// turns get this server's MCP endpoint with their own grant), and
// reconciles what an earlier process left.
func newServer(ctx context.Context, cfg config, log *zap.Logger) (*server, error) {
	s := &server{cfg: cfg.withBounds(), log: log}
	id, err := instanceID(cfg)
	if err != nil {
		return nil, err
	}
	s.demo = newDemoEngine(cfg.Demo, s.submitReport)
	acfg := agent.Config{Addr: cfg.MCPAddr, DataDir: filepath.Join(cfg.Data, "exec"), Logger: log,
		Engines: map[string]engine.Engine{"demo": s.demo}, Sessions: session.Options{InstanceID: id},
		Handoff: []handoff.Option{handoff.WithTimeouts(handoff.Timeouts{Lease: cfg.LeaseTTL}), handoff.WithObserver(s.observe)}}
	if cfg.Token != "" {
		// One door: /mcp takes the API's token too, and each CLI's MCP
		// configuration carries it.
		acfg.Bearer = baton.ParseToken(cfg.Token)
	}
	for _, name := range cfg.Engines {
		if strings.HasPrefix(name, acpPrefix) {
			if err := s.addACP(&acfg, name); err != nil {
				s.demo.Close()
				return nil, err
			}
			continue
		}
		switch name {
		case "demo":
		case agent.Claude:
			acfg.Claude = &exec.ClaudeOptions{Command: cfg.ClaudeBin}
		case agent.Codex:
			acfg.Codex = &exec.CodexOptions{Command: cfg.CodexBin}
		default:
			s.demo.Close()
			return nil, fmt.Errorf("-engine %q: want demo, %s or acp:NAME=COMMAND", name, strings.Join(realEngines, ", "))
		}
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		s.demo.Close()
		return nil, err
	}
	s.st = st
	if s.agents, err = agent.New(st, acfg); err != nil {
		s.demo.Close()
		s.closeStore()
		return nil, err
	}
	s.co, s.mcp, s.engines = s.agents.Coordinator, s.agents.MCP, s.agents.Engines
	s.svc = s.co.Sessions()
	s.base, s.cancel = context.WithCancel(context.Background())
	if s.shared() {
		// Other replicas serve this store: their session rows are theirs
		// (Recover would end them); Reconcile settles only the transfers
		// of replicas whose lease lapsed, now and at each lease TTL.
		hs, err := s.co.Reconcile(ctx)
		if err != nil {
			s.abort()
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		log.Info("reconciled", zap.String("instance", id), zap.Int("handoffs_reconciled", len(hs)))
		s.wg.Add(1)
		go s.reconcileLoop()
	} else {
		// One process serves this store: Recover ends the session rows a
		// crash left running, reaps what it left live and reconciles the
		// transfers (nothing is relaunched: the user decides).
		rec, err := s.co.Recover(ctx)
		if err != nil {
			s.abort()
			return nil, fmt.Errorf("recover: %w", err)
		}
		log.Info("recovered", zap.Int("sessions_ended", rec.EndedSessions), zap.Int("handoffs_reconciled", len(rec.Handoffs)))
	}
	s.wg.Add(1)
	go s.wakeupLoop()
	return s, nil
}

// isPostgres reports whether the -store value is a PostgreSQL URL.
func isPostgres(v string) bool {
	return strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://")
}

// shared reports whether other replicas may serve the same store.
func (s *server) shared() bool { return isPostgres(s.cfg.Store) }

func openStore(ctx context.Context, cfg config, log *zap.Logger) (store.Store, error) {
	switch {
	case isPostgres(cfg.Store):
		st, err := pgstore.Open(ctx, cfg.Store, pgstore.Options{Logger: log.Named("postgres")})
		if err != nil {
			return nil, fmt.Errorf("-store postgres://: %w", err)
		}
		return st, nil
	case cfg.Store == "memory":
		return memstore.New(), nil
	case cfg.Store == "" || cfg.Store == "badger":
		dir := filepath.Join(cfg.Data, "store")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		opts := badgerstore.Options{Logger: log.Named("badger")}
		if cfg.NoSync {
			opts.NoSync = true
		}
		return badgerstore.Open(dir, opts)
	}
	return nil, fmt.Errorf("-store %q: want empty (embedded badger in -data), memory, or a postgres:// URL", cfg.Store)
}

// instanceID keeps the coordinator's lease id across restarts, so that
// Reconcile takes its own leases back at once. On a shared store each
// replica needs its own: -instance, else host name and process id.
func instanceID(cfg config) (string, error) {
	switch {
	case cfg.Store == "memory":
		return randomID("workshop"), nil
	case cfg.Instance != "":
		return cfg.Instance, nil
	case isPostgres(cfg.Store):
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "host"
		}
		return fmt.Sprintf("workshop-%s-%d", host, os.Getpid()), nil
	}
	p := filepath.Join(cfg.Data, "instance-id")
	if b, err := os.ReadFile(p); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	id := randomID("workshop")
	if err := os.WriteFile(p, []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	return id, nil
}

func randomID(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// observe runs after every committed transition: once a transfer
// settles, the instructions it kept are delivered after the target's turn.
func (s *server) observe(ev handoff.Event) {
	if ev.Handoff.State.Terminal() && s.base != nil {
		s.nudge(ev.Handoff.Workspace)
	}
}

// submitReport is the demo engine's way back in: a report-only turn
// submits its report with the attempt's token, as an agent does.
func (s *server) submitReport(ctx context.Context, cred engine.ReportCredentials, text string) error {
	return s.co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
}

// wakeupLoop fires due wakeups once a second until shutdown.
func (s *server) wakeupLoop() {
	defer s.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.base.Done():
			return
		case <-t.C:
			if _, err := s.svc.FireDue(s.base, 16); err != nil && s.base.Err() == nil {
				s.log.Warn("firing wakeups", zap.Error(err))
			}
		}
	}
}

// reconcileLoop runs Reconcile at each lease TTL until shutdown, so that
// the transfers of a replica that died are interrupted once its lease
// lapses (never replayed: the user decides).
func (s *server) reconcileLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.leaseTTL())
	defer t.Stop()
	for {
		select {
		case <-s.base.Done():
			return
		case <-t.C:
		}
		hs, err := s.co.Reconcile(s.base)
		switch {
		case err != nil && s.base.Err() == nil:
			s.log.Warn("reconciling", zap.Error(err))
		case len(hs) > 0:
			s.log.Info("reconciled", zap.Int("handoffs_reconciled", len(hs)))
		}
	}
}

func (s *server) leaseTTL() time.Duration {
	if s.cfg.LeaseTTL > 0 {
		return s.cfg.LeaseTTL
	}
	return 30 * time.Second
}

// shutdown ends the server's work: background loops and SSE streams end,
// pending transfers become interrupted (Coordinator.Shutdown), the engine's
// processes end and the store is closed.
func (s *server) shutdown(ctx context.Context) error {
	s.ready.Store(false)
	s.stopBackground()
	s.wg.Wait()
	// The coordinator's shutdown, then the agent CLIs' engines.
	err := s.agents.Close(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// A process that never confirms its stop (hang-stop) must not hold
		// the exit: the next start reconciles what is left.
		s.log.Warn("shutdown grace exceeded; ending the remaining processes", zap.Error(err))
		err = nil
	}
	s.demo.Close()
	return errors.Join(err, s.closeACP(ctx), s.closeStore())
}

// stopBackground ends the event streams and background goroutines; no new
// one starts afterwards.
func (s *server) stopBackground() {
	s.nudgeMu.Lock()
	defer s.nudgeMu.Unlock()
	s.cancel()
}

// abort undoes newServer after a failed start.
func (s *server) abort() {
	s.stopBackground()
	_ = s.agents.Close(context.Background())
	_ = s.closeACP(context.Background())
	s.demo.Close()
	_ = s.closeStore()
}

func (s *server) closeStore() error {
	if err := s.st.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
		return err
	}
	return nil
}

// workspaceRoot is where a workspace's handoff documents are published.
func (s *server) workspaceRoot(id baton.WorkspaceID) string {
	if s.cfg.Store == "memory" {
		return ""
	}
	return filepath.Join(s.cfg.Data, "workspaces", string(id))
}

// nudge delivers the workspace's queued instructions once the turn running
// there ends. Turns that Message started deliver the next instruction by
// themselves; a turn started otherwise (an ordinary start, a transfer's
// target) is watched here until it ends. At most one watcher per
// workspace; it ends with the server.
func (s *server) nudge(ws baton.WorkspaceID) {
	s.nudgeMu.Lock()
	if s.nudging == nil {
		s.nudging = map[baton.WorkspaceID]bool{}
	}
	if s.nudging[ws] || s.base.Err() != nil {
		s.nudgeMu.Unlock()
		return
	}
	s.nudging[ws] = true
	s.wg.Add(1)
	s.nudgeMu.Unlock()
	go func() {
		defer s.wg.Done()
		defer func() { s.nudgeMu.Lock(); delete(s.nudging, ws); s.nudgeMu.Unlock() }()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if _, running := s.svc.Running(ws); !running {
				if _, _, err := s.svc.DeliverPending(s.base, ws); err != nil && s.base.Err() == nil {
					s.log.Warn("delivering queued instructions", zap.String("workspace", string(ws)), zap.Error(err))
				}
				return
			}
			select {
			case <-s.base.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// withBounds fills the connection bounds left zero with their defaults.
func (c config) withBounds() config {
	if c.BodyTimeout == 0 {
		c.BodyTimeout = defaultBodyTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = defaultIdleTimeout
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = defaultMaxStreams
	}
	if c.StreamWriteTimeout == 0 {
		c.StreamWriteTimeout = defaultStreamWriteTimeout
	}
	return c
}

// checkBounds refuses connection bounds that are not positive.
func (c config) checkBounds() error {
	switch {
	case c.BodyTimeout <= 0:
		return errors.New("-body-timeout must be positive")
	case c.IdleTimeout <= 0:
		return errors.New("-idle-timeout must be positive")
	case c.MaxStreams <= 0:
		return errors.New("-max-streams must be positive")
	case c.StreamWriteTimeout <= 0:
		return errors.New("-stream-write-timeout must be positive")
	}
	return nil
}

// envFloat reads a number variable, def when unset or malformed.
func envFloat(getenv func(string) string, k string, def float64) float64 {
	if f, err := strconv.ParseFloat(strings.TrimSpace(getenv(k)), 64); err == nil {
		return f
	}
	return def
}

// envInt reads an integer variable, def when unset or malformed.
func envInt(getenv func(string) string, k string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv(k))); err == nil {
		return n
	}
	return def
}
