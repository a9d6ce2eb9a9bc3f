package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}

// parseConfig reads the flags; each defaults to its BATON_* variable, then
// to the built-in default.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	env := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	envDur := func(k string, def time.Duration) time.Duration {
		if d, err := time.ParseDuration(getenv(k)); err == nil {
			return d
		}
		return def
	}
	fs := flag.NewFlagSet("workshop", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	var hosts, engines string
	fs.StringVar(&c.Addr, "addr", env("BATON_ADDR", "127.0.0.1:8080"), "listen address (BATON_ADDR); beyond loopback a token is required")
	fs.StringVar(&c.Data, "data", env("BATON_DATA", "./baton-data"), "data directory: the embedded store and the handoff documents (BATON_DATA)")
	fs.StringVar(&c.Store, "store", env("BATON_STORE", ""), "store: empty for the embedded badger store in -data, memory, or a postgres:// URL (BATON_STORE)")
	fs.StringVar(&c.Instance, "instance", env("BATON_INSTANCE", ""), "this replica's instance id on a postgres:// store: distinct per replica, kept across its restarts (default: host name and process id) (BATON_INSTANCE)")
	fs.DurationVar(&c.LeaseTTL, "lease-ttl", envDur("BATON_LEASE_TTL", 30*time.Second), "how long a replica's lease on the transfer it drives lasts unrenewed; a postgres:// store is reconciled this often (BATON_LEASE_TTL)")
	fs.BoolVar(&c.NoSync, "nosync", getenv("BATON_NOSYNC") == "1", "do not fsync each commit of the embedded store: survives a crash of the process, not of the machine; for demos and benchmarks (BATON_NOSYNC=1)")
	fs.StringVar(&c.LogLevel, "log-level", env("BATON_LOG_LEVEL", "info"), "debug, info, warn or error (BATON_LOG_LEVEL)")
	fs.StringVar(&engines, "engine", env("BATON_ENGINE", "demo"), "engines to offer besides demo, comma-separated: claude, codex (agent CLIs run as child processes), acp:NAME=COMMAND (an Agent Client Protocol agent) (BATON_ENGINE)")
	fs.StringVar(&c.ClaudeBin, "claude-bin", env("BATON_CLAUDE_BIN", ""), "the claude executable (default: claude on PATH) (BATON_CLAUDE_BIN)")
	fs.StringVar(&c.CodexBin, "codex-bin", env("BATON_CODEX_BIN", ""), "the codex executable (default: codex on PATH) (BATON_CODEX_BIN)")
	fs.StringVar(&hosts, "allowed-hosts", env("BATON_ALLOWED_HOSTS", ""), "extra Host names to serve, comma-separated (BATON_ALLOWED_HOSTS)")
	fs.DurationVar(&c.Demo.Ready, "demo-ready", envDur("BATON_DEMO_READY", defaultDemoTimings.Ready), "demo engine: readiness delay (BATON_DEMO_READY)")
	fs.DurationVar(&c.Demo.Turn, "demo-turn", envDur("BATON_DEMO_TURN", defaultDemoTimings.Turn), "demo engine: how long an ordinary turn runs (BATON_DEMO_TURN)")
	fs.DurationVar(&c.Demo.Report, "demo-report", envDur("BATON_DEMO_REPORT", defaultDemoTimings.Report), "demo engine: how long a report-only turn takes (BATON_DEMO_REPORT)")
	fs.DurationVar(&c.Demo.SlowReady, "demo-slow-ready", envDur("BATON_DEMO_SLOW_READY", defaultDemoTimings.SlowReady), "demo engine: readiness delay of the slow-ready model (BATON_DEMO_SLOW_READY)")
	fs.DurationVar(&c.Grace, "shutdown-grace", envDur("BATON_SHUTDOWN_GRACE", 10*time.Second), "how long a shutdown waits for processes to confirm their stop (BATON_SHUTDOWN_GRACE)")
	fs.DurationVar(&c.Heartbeat, "heartbeat", envDur("BATON_HEARTBEAT", 15*time.Second), "event stream heartbeat interval (BATON_HEARTBEAT)")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", envDur("BATON_BODY_TIMEOUT", defaultBodyTimeout), "how long a request body may take to arrive (BATON_BODY_TIMEOUT)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", envDur("BATON_IDLE_TIMEOUT", defaultIdleTimeout), "how long an idle kept-alive connection stays open (BATON_IDLE_TIMEOUT)")
	fs.IntVar(&c.MaxStreams, "max-streams", envInt(getenv, "BATON_MAX_STREAMS", defaultMaxStreams), "the most event streams open at once, all clients together (BATON_MAX_STREAMS)")
	fs.DurationVar(&c.StreamWriteTimeout, "stream-write-timeout", envDur("BATON_STREAM_WRITE_TIMEOUT", defaultStreamWriteTimeout), "how long a write to an event stream may block before the reader is dropped (BATON_STREAM_WRITE_TIMEOUT)")
	fs.Float64Var(&c.Pressure, "pressure-threshold", envFloat(getenv, "BATON_PRESSURE_THRESHOLD", 0), "the context-pressure threshold of new workspaces: a fraction of the context window at which a settled turn hands over by itself; 0 for off (BATON_PRESSURE_THRESHOLD)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	// The token is read from the environment only: a flag would show it in
	// the process list.
	c.Token = strings.TrimSpace(getenv("BATON_TOKEN"))
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.Hosts = append(c.Hosts, h)
		}
	}
	for _, e := range strings.Split(engines, ",") {
		if e = strings.TrimSpace(e); e != "" {
			c.Engines = append(c.Engines, e)
		}
	}
	if c.LeaseTTL <= 0 {
		return config{}, errors.New("-lease-ttl must be positive")
	}
	if c.Heartbeat <= 0 {
		return config{}, errors.New("-heartbeat must be positive")
	}
	if !(c.Pressure >= 0 && c.Pressure <= 1) {
		return config{}, errors.New("-pressure-threshold must be in [0, 1]")
	}
	if err := c.checkBounds(); err != nil {
		return config{}, err
	}
	return c, nil
}

// loopbackAddr is the address at which a process on this machine reaches
// a listener on a over loopback: a itself on loopback, the loopback
// address of its family when a listens on every interface. ok is false
// for a listener on one address beyond loopback, which loopback does not
// reach: the loopback address of its port is returned, for a server whose
// engines never call the MCP endpoint (demo).
func loopbackAddr(a *net.TCPAddr) (addr string, ok bool) {
	ip, ok := a.IP, true
	switch {
	case ip.IsLoopback():
	case ip.IsUnspecified() && ip.To4() == nil:
		ip = net.IPv6loopback
	default:
		ip, ok = net.IPv4(127, 0, 0, 1), ip == nil || ip.IsUnspecified()
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(a.Port)), ok
}

func newLogger(level string, w io.Writer) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("-log-level: %w", err)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), lvl)
	return zap.New(core), nil
}

// run serves until ctx ends (SIGINT, SIGTERM) and returns the exit code:
// 0 after a clean shutdown, 2 for a bad configuration, 1 otherwise.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "workshop:", err)
		return 2
	}
	log, err := newLogger(cfg.LogLevel, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "workshop:", err)
		return 2
	}
	defer func() { _ = log.Sync() }()
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "workshop: -addr:", err)
		return 2
	}
	loopback := loopbackHost(host)
	if !loopback && cfg.Token == "" {
		fmt.Fprintf(stderr, "workshop: refusing to listen on %s beyond loopback without a bearer token: set BATON_TOKEN\n", cfg.Addr)
		return 2
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil && cfg.Store != "memory" {
		fmt.Fprintln(stderr, "workshop:", err)
		return 1
	}
	// Listen first: the agent CLIs' MCP configurations name this address.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		fmt.Fprintln(stderr, "workshop:", err)
		return 1
	}
	defer ln.Close()
	var reachable bool
	cfg.MCPAddr, reachable = loopbackAddr(ln.Addr().(*net.TCPAddr))
	if !reachable && slices.ContainsFunc(cfg.Engines, func(e string) bool { return e != "demo" }) {
		fmt.Fprintf(stderr, "workshop: -engine %s needs -addr on loopback or on every interface: the agent CLIs reach the MCP endpoint on loopback\n", strings.Join(cfg.Engines, ","))
		return 2
	}
	s, err := newServer(ctx, cfg, log)
	if err != nil {
		fmt.Fprintln(stderr, "workshop:", err)
		if strings.Contains(err.Error(), "postgres") {
			return 2
		}
		return 1
	}
	s.hosts = allowedHosts(host, cfg.Hosts)
	hs := s.httpServer()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	s.ready.Store(true)
	log.Info("serving", zap.String("addr", ln.Addr().String()), zap.String("data", cfg.Data), zap.Bool("loopback", loopback))

	code := 0
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-served:
		log.Error("server failed", zap.Error(err))
		code = 1
	}
	// Streams end first (they never go idle), then in-flight requests
	// finish, then pending transfers become interrupted.
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s.ready.Store(false)
	s.stopBackground()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("http shutdown", zap.Error(err))
		code = 1
	}
	gctx, gcancel := context.WithTimeout(context.Background(), cfg.Grace)
	defer gcancel()
	if err := s.shutdown(gctx); err != nil {
		log.Error("shutdown", zap.Error(err))
		code = 1
	}
	log.Info("stopped")
	return code
}
