// Command host is the host program of the crash tests: a process built on
// store/badgerstore, engine/exec and handoff.Coordinator, the way a tool
// embeds baton.
//
// In mode "run" it creates a workspace, starts a source session (the
// stand-in agent, which forks a grandchild), asks for a transfer to another
// model (with a report when -summary is set; the report-only turn submits
// it over HTTP on 127.0.0.1), prints a line at each committed change
// (Coordinator.Watch) and after each spawn, and then waits to be killed.
//
// In mode "recover" it opens the same directory, calls Coordinator.Recover
// (its log lines, JSON, go to stdout too), prints what Recover said it
// reaped and what it left (the transfers, the live launches, the current
// session), and exits. With -reap-fail its engine cannot confirm any reap
// (a fault of the test): the workspace must then stay held, which it checks
// by trying an ordinary start. With -no-reaper its engine is not an
// engine.Reaper at all (a broken host, which the test must catch).
//
// In mode "retry" it recovers, retries an interrupted or failed transfer
// (Decide), waits until it settles, prints it, and shuts down, which stops
// what it launched.
//
// Every Start is first appended to the -spawnlog file and synced, so that a
// spawn the host made before it was killed is always on record.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/transcript"
)

// Spawn is one line of the spawn log.
type Spawn struct {
	Host     string `json:"host"` // run | recover
	Launch   string `json:"launch"`
	Session  string `json:"session"`
	Turn     string `json:"turn"`
	Mode     string `json:"mode"`
	Attempt  int    `json:"attempt"`
	NativeID string `json:"nativeId,omitempty"`
	Model    string `json:"model"`
}

var outMu sync.Mutex

func say(format string, args ...any) {
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

func fail(err error) {
	say("error %v", err)
	os.Exit(1)
}

// spawnLog wraps the exec engine: every Start is recorded (synced) before
// the spawn and announced after it. The embedded Engine keeps ReapLaunch
// and CanReconfigure.
type spawnLog struct {
	*exec.Engine
	host string
	mu   sync.Mutex
	f    *os.File
}

func (s *spawnLog) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	rec := Spawn{Host: s.host, Launch: string(req.LaunchID), Session: string(req.Session), Turn: string(req.Turn),
		Mode: string(req.Mode), Attempt: req.Attempt, NativeID: req.NativeID, Model: req.Config.Model}
	b, _ := json.Marshal(rec)
	s.mu.Lock()
	_, err := s.f.Write(append(b, '\n'))
	if err == nil {
		err = s.f.Sync()
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	p, err := s.Engine.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	what := "source"
	switch {
	case req.Turn == transcript.ReportOnly:
		what = "report"
	case req.Attempt > 0:
		what = "target"
	}
	say("spawn %s session=%s attempt=%d launch=%s", what, req.Session, req.Attempt, req.LaunchID)
	return p, nil
}

// failingReaper confirms no reap: the fault of -reap-fail.
type failingReaper struct{ *spawnLog }

func (failingReaper) ReapLaunch(context.Context, baton.LaunchID) (engine.StopOutcome, error) {
	return engine.Timeout, errors.New("reap not confirmed (injected)")
}

// startOnly hides every capability of the engine but Start: a host that
// forgot its processes can outlive it (-no-reaper, the test's mutant).
type startOnly struct{ e engine.Engine }

func (s startOnly) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	return s.e.Start(ctx, req)
}

func main() {
	mode := flag.String("mode", "run", "run | recover | retry")
	dir := flag.String("dir", "", "the host's data directory")
	agent := flag.String("agent", "", "the stand-in agent binary")
	summary := flag.Bool("summary", false, "ask the source for a report")
	spawns := flag.String("spawnlog", "", "the spawn log")
	reapFail := flag.Bool("reap-fail", false, "recover: no reap is confirmed")
	noReaper := flag.Bool("no-reaper", false, "recover: the engine is not an engine.Reaper (a broken host)")
	flag.Parse()
	ctx := context.Background()

	f, err := os.OpenFile(*spawns, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fail(err)
	}
	st, err := badgerstore.Open(filepath.Join(*dir, "store"), badgerstore.Options{})
	if err != nil {
		fail(err)
	}
	defer st.Close()

	var co *handoff.Coordinator
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Workspace, Handoff, Attempt, Token, Text string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err := co.SubmitReport(r.Context(), baton.WorkspaceID(in.Workspace), baton.HandoffID(in.Handoff), in.Token, in.Text); err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		say("report submitted attempt=%s", in.Attempt)
		w.WriteHeader(http.StatusNoContent)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	ex, err := exec.New(exec.Options{
		DataDir:   filepath.Join(*dir, "exec"),
		Env:       append(os.Environ(), "CRASHTEST_RUN="+*dir),
		StopGrace: 100 * time.Millisecond,
		Profile: exec.Profile{
			Name:    "agent",
			Command: *agent,
			Fresh:   []string{"-prompt", "{prompt}", "{flags}"},
			Resume:  []string{"-resume", "{native_id}", "-prompt", "{prompt}", "{flags}"},
			Model:   []string{"-model", "{model}"},
			LaunchExtra: func(_ context.Context, req engine.StartRequest) (exec.Extra, error) {
				c := req.Report
				if req.Turn != transcript.ReportOnly || c == nil {
					return exec.Extra{}, nil
				}
				b, err := json.Marshal(map[string]string{"url": "http://" + ln.Addr().String() + "/report", "workspace": string(c.Workspace),
					"handoff": string(c.Handoff), "attempt": strconv.Itoa(c.Attempt), "token": c.Token.Reveal()})
				return exec.Extra{Files: map[string][]byte{"report.json": b}, Flags: []string{"-report", "{file:report.json}"}}, err
			},
			Models: []string{"small", "large"},
			Output: exec.Output{
				JSON:     true,
				NativeID: []exec.Rule{{Fields: map[string]string{"type": "init"}, ID: "session_id"}},
				Ready:    []exec.Rule{{Fields: map[string]string{"type": "ready"}}},
				Reject:   []exec.Rule{{Fields: map[string]string{"type": "rejected"}}},
				TurnEnd:  []exec.Rule{{Fields: map[string]string{"type": "end"}}},
			},
		},
	})
	if err != nil {
		fail(err)
	}
	defer ex.Close(ctx)
	logged := &spawnLog{Engine: ex, host: *mode, f: f}
	var eng engine.Engine = logged
	switch {
	case *reapFail:
		eng = failingReaper{logged}
	case *noReaper:
		eng = startOnly{logged}
	}
	var so session.Options
	if *mode == "recover" {
		// What Recover reaped is logged at info: the JSON lines go to
		// stdout, among the host's own.
		so.Logger = zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
			zapcore.Lock(os.Stdout), zapcore.InfoLevel))
	}
	reg := engine.Registry{"agent": eng}
	svc, err := session.New(st, reg, so)
	if err != nil {
		fail(err)
	}
	co, err = handoff.New(svc, reg)
	if err != nil {
		fail(err)
	}
	switch *mode {
	case "run":
		run(ctx, co, *dir, *summary)
	case "recover":
		recoverAll(ctx, co, st)
	case "retry":
		retry(ctx, co)
	default:
		fail(fmt.Errorf("unknown mode %q", *mode))
	}
	if err := co.Shutdown(ctx); err != nil {
		fail(err)
	}
}

// run drives one transfer and then waits to be killed.
func run(ctx context.Context, co *handoff.Coordinator, dir string, summary bool) {
	svc := co.Sessions()
	root := filepath.Join(dir, "ws")
	if err := os.MkdirAll(root, 0o700); err != nil {
		fail(err)
	}
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Root: root, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: "agent", Model: "small"}}); err != nil {
		fail(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		last := ""
		for ch, err := range co.Watch(wctx, "ws", 0) {
			if err != nil {
				say("error watch: %v", err)
				return
			}
			switch {
			case ch.Handoff != nil:
				h := ch.Handoff
				line := fmt.Sprintf("state %s attempt=%d stopUnconfirmed=%t", h.State, h.Attempt, h.StopUnconfirmed)
				if line != last {
					say("%s", line)
					last = line
				}
			case ch.Session != nil:
				say("session %s %s", ch.Session.ID, ch.Session.Status)
			}
		}
	}()
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Fix the parser."})
	if err != nil {
		fail(err)
	}
	say("source ready session=%s native=%s", src.ID, src.NativeID)
	h, err := co.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: src.ID,
		GenerateSummary: summary, Target: baton.EngineConfig{Engine: "agent", Model: "large"}})
	if err != nil {
		fail(err)
	}
	h, err = co.Wait(ctx, "ws", h.ID)
	if err != nil {
		fail(err)
	}
	say("settled %s report=%t", h.State, h.Report != "")
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR2)
	<-c
}

// recoverAll runs Recover and prints what it left.
func recoverAll(ctx context.Context, co *handoff.Coordinator, st store.Store) {
	rec, err := co.Recover(ctx)
	if err != nil {
		fail(err)
	}
	say("recovered endedSessions=%d handoffs=%d", rec.EndedSessions, len(rec.Handoffs))
	for _, r := range rec.Reaped {
		say("reaped launch=%s workspace=%s session=%s outcome=%s", r.ID, r.Workspace, r.Session, r.Outcome)
	}
	for _, r := range rec.Held {
		say("unreaped launch=%s workspace=%s session=%s outcome=%s err=%q", r.ID, r.Workspace, r.Session, r.Outcome, r.Err)
	}
	hs, err := co.List(ctx, "ws")
	if errors.Is(err, session.ErrNoWorkspace) {
		say("no workspace")
		return
	}
	if err != nil {
		fail(err)
	}
	held := false
	for _, h := range hs {
		say("handoff %s state=%s stopUnconfirmed=%t", h.ID, h.State, h.StopUnconfirmed)
		if h.State.Pending() && h.StopUnconfirmed {
			held = true
		}
	}
	var live []store.Launch
	if err := st.View(ctx, func(tx store.Tx) (err error) { live, err = tx.LiveLaunches("ws"); return err }); err != nil {
		fail(err)
	}
	for _, l := range live {
		say("live launch=%s session=%s", l.ID, l.Session)
	}
	if cur, err := co.Sessions().Current(ctx, "ws"); err == nil {
		say("current session=%s status=%s", cur.ID, cur.Status)
	}
	if len(live) == 0 && !held {
		say("released")
		return
	}
	// Something may still run: an ordinary start must be refused.
	_, err = co.Sessions().Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Go on.", Fresh: true})
	switch {
	case errors.Is(err, session.ErrSessionRunning), errors.Is(err, session.ErrWorkspaceBusy):
		say("held start=refused err=%q", err)
	default:
		say("error an ordinary start was not refused while a launch may still run: %v", err)
	}
}

// retry recovers, then retries the workspace's transfer if it waits for a
// decision, and waits until it settles.
func retry(ctx context.Context, co *handoff.Coordinator) {
	if _, err := co.Recover(ctx); err != nil {
		fail(err)
	}
	hs, err := co.List(ctx, "ws")
	if errors.Is(err, session.ErrNoWorkspace) {
		say("nothing to retry")
		return
	}
	if err != nil {
		fail(err)
	}
	for _, h := range hs {
		if h.State != store.StateInterrupted && h.State != store.StateFailed {
			continue
		}
		h, err := co.Decide(ctx, "ws", h.ID, handoff.Retry)
		if err != nil {
			fail(err)
		}
		say("retried attempt=%d", h.Attempt)
		if h, err = co.Wait(ctx, "ws", h.ID); err != nil {
			fail(err)
		}
		say("settled %s attempt=%d", h.State, h.Attempt)
		return
	}
	say("nothing to retry")
}
