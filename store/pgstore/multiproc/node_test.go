package multiproc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// The node's environment.
const (
	envNode   = "BATON_MULTIPROC_NODE"   // "1": run as a node
	envURL    = "BATON_MULTIPROC_URL"    // the database
	envSchema = "BATON_MULTIPROC_SCHEMA" // the store's schema
	envID     = "BATON_MULTIPROC_ID"     // the instance id
	envLog    = "BATON_MULTIPROC_LOG"    // the node's log file
	envTTL    = "BATON_MULTIPROC_TTL"    // the lease TTL
	// envIdle, if set, is the store's IdleInTransactionTimeout.
	envIdle = "BATON_MULTIPROC_IDLE"
)

// frozenPrefix names the workspaces whose first launch record the node
// freezes inside its Update (freezeStore).
const frozenPrefix = "frozen-node"

// Target models of the scripted engine.
const (
	modelOK   = "ok"   // ready at once
	modelHold = "hold" // readiness held until stopped
	modelGate = "gate" // as hold, and the briefing waits for a "release" command
	// modelSpawnGate: as hold, and the engine waits for a "release"
	// command after the launch was fenced in and recorded, before the
	// process starts.
	modelSpawnGate = "spawn-gate"
	// modelConfirm: readiness held until a "confirm" command names the
	// workspace, so that the transfer stays pending as long as the test
	// needs.
	modelConfirm = "confirm"
)

// command is one line a node reads.
type command struct {
	Op      string `json:"op"` // workspace, create, get, decide, stop, reconcile, release, confirm
	WS      string `json:"ws,omitempty"`
	Req     string `json:"req,omitempty"`
	Model   string `json:"model,omitempty"`
	Handoff string `json:"handoff,omitempty"`
	Action  string `json:"action,omitempty"`
}

// reply is one line a node writes.
type reply struct {
	OK              bool   `json:"ok"`
	Err             string `json:"err,omitempty"`
	Kind            string `json:"kind,omitempty"` // the sentinel matched: pending, stale_epoch, not_found, other
	Handoff         string `json:"handoff,omitempty"`
	State           string `json:"state,omitempty"`
	Attempt         int    `json:"attempt,omitempty"`
	StopUnconfirmed bool   `json:"stopUnconfirmed,omitempty"`
	Outcome         string `json:"outcome,omitempty"`
	Reconciled      int    `json:"reconciled,omitempty"`
	Confirmed       int    `json:"confirmed,omitempty"` // confirm: the targets this node released
}

// logEvent is one line of a node's log file written by the node itself
// (the coordinator's zap lines sit between them).
type logEvent struct {
	Ev      string `json:"ev"` // launch, held, refused, spawning, stop, briefing, ready, frozen, unfrozen
	Node    string `json:"node"`
	WS      string `json:"ws,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	Outcome string `json:"outcome,omitempty"`
}

// lockedFile serializes the writes of the node's events and its logger.
type lockedFile struct {
	mu sync.Mutex
	f  *os.File
}

func (l *lockedFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

func (l *lockedFile) Sync() error { return nil }

func (l *lockedFile) event(e logEvent) {
	b, _ := json.Marshal(e)
	_, _ = l.Write(append(b, '\n'))
}

// loggingEngine records every launch and every stop in the node's log
// before it happens. It supports two-phase starts the way an in-process
// engine does: the scripted process starts only once StartRequest.Admit
// admitted it (a refusal is logged as such, and nothing starts).
type loggingEngine struct {
	inner engine.Engine
	log   *lockedFile
	node  string
	gate  <-chan struct{} // modelSpawnGate's
}

func (e *loggingEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	ev := logEvent{Node: e.node, WS: string(req.Workspace), Attempt: req.Attempt}
	if req.Config.Model == modelSpawnGate {
		ev.Ev = "spawning"
		e.log.event(ev)
		select {
		case <-e.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if req.Admit != nil {
		if err := req.Admit(ctx); err != nil {
			ev.Ev = "refused"
			e.log.event(ev)
			return nil, err
		}
	}
	ev.Ev = "launch"
	e.log.event(ev)
	p, err := e.inner.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.Config.Model == modelConfirm {
		// The process runs: a "confirm" command now finds it.
		ev.Ev = "held"
		e.log.event(ev)
	}
	return &loggingProcess{Process: p, e: e, ws: string(req.Workspace), attempt: req.Attempt}, nil
}

type loggingProcess struct {
	engine.Process
	e       *loggingEngine
	ws      string
	attempt int
}

func (p *loggingProcess) Stop(ctx context.Context) (engine.StopOutcome, error) {
	out, err := p.Process.Stop(ctx)
	p.e.log.event(logEvent{Ev: "stop", Node: p.e.node, WS: p.ws, Attempt: p.attempt, Outcome: string(out)})
	return out, err
}

// freezeStore stops, inside the Update, the first PutLaunch of a
// workspace named with frozenPrefix, once the launch is written and the
// workspace's lock held: it logs "frozen" and waits for the gate (a
// "release" command), so that the test can SIGSTOP the process inside an
// Update. It logs the end of that Update as "unfrozen", with its error
// (Outcome).
type freezeStore struct {
	*pgstore.Store
	log  *lockedFile
	node string
	gate <-chan struct{}
	once *sync.Once
}

func (s freezeStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	var froze logEvent
	err := s.Store.Update(ctx, func(tx store.Tx) error { return fn(freezeTx{Tx: tx, s: s, froze: &froze}) })
	if froze.Ev != "" {
		froze.Ev, froze.Outcome = "unfrozen", fmt.Sprint(err)
		s.log.event(froze)
	}
	return err
}

type freezeTx struct {
	store.Tx
	s     freezeStore
	froze *logEvent
}

func (t freezeTx) PutLaunch(l store.Launch) error {
	err := t.Tx.PutLaunch(l)
	if err == nil && strings.HasPrefix(string(l.Workspace), frozenPrefix) {
		t.s.once.Do(func() {
			*t.froze = logEvent{Ev: "frozen", Node: t.s.node, WS: string(l.Workspace), Attempt: l.Attempt}
			t.s.log.event(*t.froze)
			<-t.s.gate
		})
	}
	return err
}

// runNode is the node program: it serves commands from stdin until EOF,
// then shuts its coordinator down. It returns the exit code.
func runNode() int {
	ttl, err := time.ParseDuration(os.Getenv(envTTL))
	if err != nil {
		fmt.Fprintln(os.Stderr, "node: lease TTL:", err)
		return 2
	}
	id := os.Getenv(envID)
	f, err := os.OpenFile(os.Getenv(envLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 2
	}
	defer f.Close()
	lf := &lockedFile{f: f}
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), lf, zapcore.DebugLevel)).With(zap.String("node", id))

	ctx := context.Background()
	opts := pgstore.Options{Schema: os.Getenv(envSchema), Logger: log.Named("pg")}
	if v := os.Getenv(envIdle); v != "" {
		if opts.IdleInTransactionTimeout, err = time.ParseDuration(v); err != nil {
			fmt.Fprintln(os.Stderr, "node: idle timeout:", err)
			return 2
		}
	}
	// The node's sessions carry its id, for the test to find them on the
	// server.
	url := os.Getenv(envURL)
	if strings.Contains(url, "?") {
		url += "&application_name=" + id
	} else {
		url += "?application_name=" + id
	}
	pg, err := pgstore.Open(ctx, url, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	defer pg.Close()
	gate := make(chan struct{})
	var gateOnce sync.Once
	st := freezeStore{Store: pg, log: lf, node: id, gate: gate, once: new(sync.Once)}
	scripted := enginetest.New(enginetest.Options{ScriptFor: func(req engine.StartRequest) (enginetest.Script, bool) {
		switch req.Config.Model {
		case modelHold, modelGate, modelSpawnGate, modelConfirm:
			return enginetest.Script{Ready: enginetest.ReadyHold}, true
		}
		return enginetest.Script{}, true
	}})
	defer scripted.Close()
	reg := engine.Registry{"test": &loggingEngine{inner: scripted, log: lf, node: id, gate: gate}}
	svc, err := session.New(st, reg, session.Options{Logger: log.Named("session"), InstanceID: id})
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	briefing := func(ctx context.Context, in handoff.BriefingInput) (string, error) {
		if in.Handoff.TargetConfig.Model == modelGate {
			lf.event(logEvent{Ev: "briefing", Node: id, WS: string(in.Handoff.Workspace), Attempt: in.Handoff.Attempt})
			select {
			case <-gate:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return handoff.DefaultBriefing(ctx, in)
	}
	co, err := handoff.New(svc, reg, handoff.WithTimeouts(handoff.Timeouts{Lease: ttl}), handoff.WithBriefing(handoff.Briefing{Build: briefing}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		return 1
	}
	if _, err := co.Reconcile(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "node: reconcile:", err)
		return 1
	}
	// Reconcile at each lease TTL, as a server on a shared store does.
	loopCtx, stopLoop := context.WithCancel(ctx)
	var loop sync.WaitGroup
	loop.Add(1)
	go func() {
		defer loop.Done()
		t := time.NewTicker(ttl)
		defer t.Stop()
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-t.C:
			}
			if _, err := co.Reconcile(loopCtx); err != nil && loopCtx.Err() == nil {
				log.Warn("reconcile", zap.Error(err))
			}
		}
	}()
	lf.event(logEvent{Ev: "ready", Node: id})

	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var cmd command
		if err := json.Unmarshal(in.Bytes(), &cmd); err != nil {
			_ = out.Encode(reply{Err: err.Error(), Kind: "other"})
			continue
		}
		if cmd.Op == "release" {
			gateOnce.Do(func() { close(gate) })
			_ = out.Encode(reply{OK: true})
			continue
		}
		if cmd.Op == "confirm" {
			// Confirm the readiness of this node's held modelConfirm
			// targets in the workspace.
			n := 0
			for _, l := range scripted.Launches() {
				if l.Proc != nil && string(l.Req.Workspace) == cmd.WS && l.Req.Config.Model == modelConfirm {
					l.Proc.Release("")
					n++
				}
			}
			_ = out.Encode(reply{OK: true, Confirmed: n})
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r := serve(cctx, co, svc, cmd)
		cancel()
		_ = out.Encode(r)
	}
	stopLoop()
	loop.Wait()
	gateOnce.Do(func() { close(gate) })
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := co.Shutdown(sctx); err != nil {
		fmt.Fprintln(os.Stderr, "node: shutdown:", err)
		return 1
	}
	return 0
}

// serve runs one command.
func serve(ctx context.Context, co *handoff.Coordinator, svc *session.Service, cmd command) reply {
	ws := baton.WorkspaceID(cmd.WS)
	var (
		h   store.Handoff
		err error
		r   reply
	)
	switch cmd.Op {
	case "workspace":
		_, err = svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Name: cmd.WS, Config: baton.EngineConfig{Engine: "test", Model: modelOK}})
		return answer(reply{}, err)
	case "create":
		h, err = co.Create(ctx, handoff.Request{Workspace: ws, RequestID: cmd.Req, Target: baton.EngineConfig{Engine: "test", Model: cmd.Model}})
	case "get":
		h, err = co.Get(ctx, ws, baton.HandoffID(cmd.Handoff))
	case "decide":
		h, err = co.Decide(ctx, ws, baton.HandoffID(cmd.Handoff), handoff.Action(cmd.Action))
	case "stop":
		var o engine.StopOutcome
		o, err = co.Stop(ctx, ws)
		r.Outcome = string(o)
		return answer(r, err)
	case "reconcile":
		var hs []store.Handoff
		hs, err = co.Reconcile(ctx)
		r.Reconciled = len(hs)
		return answer(r, err)
	default:
		err = fmt.Errorf("unknown op %q", cmd.Op)
	}
	if err == nil {
		r.Handoff, r.State, r.Attempt, r.StopUnconfirmed = string(h.ID), string(h.State), h.Attempt, h.StopUnconfirmed
	}
	return answer(r, err)
}

func answer(r reply, err error) reply {
	if err == nil {
		r.OK = true
		return r
	}
	r.Err = err.Error()
	switch {
	case errors.Is(err, handoff.ErrTransferPending):
		r.Kind = "pending"
	case errors.Is(err, baton.ErrStale):
		r.Kind = "stale_epoch"
	case errors.Is(err, handoff.ErrNotFound):
		r.Kind = "not_found"
	default:
		r.Kind = "other"
	}
	return r
}

var _ io.Writer = (*lockedFile)(nil)
