package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

type serveConfig struct {
	socket string
	grace  time.Duration
	poll   time.Duration
	sweep  time.Duration
	claims string
	hooks  string
}

func parseServe(args []string, stderr io.Writer) (serveConfig, error) {
	var c serveConfig
	fs := flag.NewFlagSet("rpchost serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.socket, "socket", "", "public unix socket `path` (required)")
	fs.DurationVar(&c.grace, "grace", 10*time.Minute, "soft grace of a drain before it reports what holds it")
	fs.DurationVar(&c.poll, "poll", time.Second, "how often to check that the public socket is still ours")
	fs.DurationVar(&c.sweep, "sweep", 50*time.Millisecond, "drain sweep period")
	fs.StringVar(&c.claims, "claims", "", "cross-generation claim `dir` (default PATH.claims)")
	fs.StringVar(&c.hooks, "hooks", "all", "scripted runtime capabilities: all, activity, settle or none")
	if err := fs.Parse(args); err != nil {
		return c, errUsage
	}
	var bad string
	switch {
	case fs.NArg() > 0:
		bad = "unexpected arguments"
	case c.socket == "":
		bad = "-socket is required"
	case c.grace <= 0 || c.poll <= 0 || c.sweep <= 0:
		bad = "-grace, -poll and -sweep must be positive"
	case c.hooks != "all" && c.hooks != "activity" && c.hooks != "settle" && c.hooks != "none":
		bad = "-hooks must be all, activity, settle or none"
	}
	if bad != "" {
		fmt.Fprintln(stderr, "rpchost serve:", bad)
		return c, errUsage
	}
	abs, err := filepath.Abs(c.socket)
	if err != nil {
		return c, err
	}
	c.socket = abs
	if c.claims == "" {
		c.claims = c.socket + ".claims"
	}
	if c.claims, err = filepath.Abs(c.claims); err != nil {
		return c, err
	}
	return c, nil
}

// servingLine is the one line serve prints on stdout, fields in this
// order.
type servingLine struct {
	Event      string `json:"event"`
	PID        int    `json:"pid"`
	InstanceID string `json:"instanceId"`
	Generation int    `json:"generation"`
	Socket     string `json:"socket"`
}

func runServe(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
		zapcore.Lock(zapcore.AddSync(stderr)), zap.InfoLevel)).With(zap.Int("pid", os.Getpid()))
	defer func() { _ = log.Sync() }()

	// Signals are caught from the start, so a SIGUSR1 that arrives while
	// the takeover is still under way is not fatal.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	ctx := context.Background()
	release, err := lockTakeover(ctx, cfg.socket)
	if err != nil {
		return err
	}
	h, served, own, err := takeOver(ctx, cfg, log)
	release()
	if err != nil {
		return err
	}
	info := h.Info()
	line, _ := json.Marshal(servingLine{Event: "serving", PID: info.PID, InstanceID: info.InstanceID,
		Generation: info.Generation, Socket: cfg.socket})
	fmt.Fprintf(stdout, "%s\n", line)
	log.Info("serving", zap.String("instanceId", info.InstanceID), zap.Int("generation", info.Generation),
		zap.String("socket", cfg.socket))

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watchEntry(watchCtx, cfg.socket, own, cfg.poll, func(v verdict) {
		if v == replaced {
			log.Info("public socket replaced; superseded")
			_ = h.Drain(cfg.socket)
			return
		}
		log.Info("public socket gone for consecutive polls; superseded", zap.Int("polls", absentPolls))
		_ = h.Drain("")
	})
	go func() {
		for sig := range sigs {
			if sig == syscall.SIGUSR1 {
				log.Info("successor signalled; superseded")
				_ = h.Drain(cfg.socket)
				continue
			}
			log.Info("shutting down", zap.String("signal", sig.String()))
			closeHost(h, 10*time.Second)
		}
	}()

	// Serve returns nil once drained, ErrClosed after a shutdown, or a
	// listener failure (then shut down here).
	err = <-served
	if err != nil && !errors.Is(err, host.ErrClosed) {
		log.Error("serving failed; shutting down", zap.Error(err))
		closeHost(h, 10*time.Second)
	}
	if err != nil {
		// Shut down, not superseded: the public entry is still ours to
		// remove (if it is still ours at all).
		if cur, _, serr := statID(cfg.socket); serr == nil && cur == own {
			_ = os.Remove(cfg.socket)
		}
		if errors.Is(err, host.ErrClosed) {
			return nil
		}
		return err
	}
	log.Info("drained; exiting")
	return nil
}

// takeOver binds the public socket as generation 1, or takes it over from
// the live host there as its successor, and starts serving. It returns the
// host, the result of its Serve, and the id of the public entry it now
// owns.
func takeOver(ctx context.Context, cfg serveConfig, log *zap.Logger) (*host.Host, <-chan error, fileID, error) {
	pred, expected, err := probe(ctx, cfg.socket)
	if err != nil {
		return nil, nil, fileID{}, err
	}
	opts := host.Options{Logger: log, Grace: cfg.grace, Sweep: cfg.sweep, ClaimDir: cfg.claims}
	if pred != nil {
		opts.Generation = pred.Generation + 1
	}
	h, err := host.New(newRuntime(cfg.hooks), opts)
	if err != nil {
		return nil, nil, fileID{}, err
	}
	bind := cfg.socket
	if pred != nil {
		bind = sidePath(cfg.socket)
		_ = os.Remove(bind) // left by a crashed attempt of a process with our pid
	}
	ln, err := listenUnix(bind)
	if err != nil {
		return nil, nil, fileID{}, err
	}
	own, _, err := statID(bind)
	if err != nil {
		_ = ln.Close()
		return nil, nil, fileID{}, err
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- h.Serve(context.Background(), ln) }()
	if pred == nil {
		return h, serveErr, own, nil
	}
	fail := func(err error) (*host.Host, <-chan error, fileID, error) {
		closeHost(h, 5*time.Second)
		_ = os.Remove(bind)
		return nil, nil, fileID{}, err
	}
	if err := replaceIfSame(bind, cfg.socket, expected); err != nil {
		return fail(err)
	}
	if err := waitReady(ctx, cfg.socket, h.Info().InstanceID); err != nil {
		// The path is ours now, whatever happened to the check: serve on
		// and let the predecessor notice the replaced entry by polling.
		log.Error("public socket did not answer as this host; not signalling the predecessor", zap.Error(err))
		return h, serveErr, own, nil
	}
	log.Info("took over the public socket; signalling predecessor", zap.Int("predecessorPid", pred.PID),
		zap.String("predecessor", pred.InstanceID), zap.Int("predecessorGeneration", pred.Generation))
	if pred.PID > 0 && pred.PID != os.Getpid() {
		if err := syscall.Kill(pred.PID, syscall.SIGUSR1); err != nil {
			// It will notice the replaced entry by polling.
			log.Warn("could not signal predecessor", zap.Int("predecessorPid", pred.PID), zap.Error(err))
		}
	}
	return h, serveErr, own, nil
}

// closeHost shuts h down at once, waiting at most limit for it.
func closeHost(h *host.Host, limit time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	_ = h.Close(ctx)
}

func newRuntime(hooks string) host.Runtime {
	return hosttest.NewScripted(hosttest.ScriptedOptions{
		NoActivity: hooks == "settle" || hooks == "none",
		NoSettle:   hooks == "activity" || hooks == "none",
	})
}
