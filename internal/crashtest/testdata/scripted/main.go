// Command scripted drives session transfers on a badger directory so that
// the crash tests of package crashtest can kill it at chosen moments. It is
// a test program: it prints one line per event on standard output and is
// built and run by those tests.
//
// Usage:
//
//	scripted -dir DIR -log FILE [-transfers N] [-stop-at K]
//	scripted -dir DIR -log FILE -recover
//
// Without -recover it opens the store (creating N workspaces, each with a
// running source session and a pending wakeup pinned to it, on a fresh
// directory), then creates one transfer per workspace in turn (every other
// one with a report) and waits for each to settle. Every launch the engine
// makes is appended to FILE and fsynced before the engine starts it. Output
// lines:
//
//	commit N           after the Nth Update that committed (durable)
//	spawn N LAUNCH     after a launch is on FILE and started
//	created HANDOFF    after Create returned
//	settled HANDOFF STATE
//	done
//
// With -stop-at K, at the Kth commit or spawn event it prints "stop" after
// the event's line and freezes: no other commit or launch proceeds, so a
// kill then lands right after that event. With -recover it runs
// Coordinator.Recover and exits, printing "recovered N".
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/transcript"
)

// LogLine is one launch as appended to the launch log (one JSON object a
// line).
type LogLine struct {
	Launch  baton.LaunchID    `json:"launch"`
	Session baton.SessionID   `json:"session"`
	Handoff baton.HandoffID   `json:"handoff,omitempty"`
	Attempt int               `json:"attempt"`
	Turn    transcript.Turn   `json:"turn"`
	WS      baton.WorkspaceID `json:"workspace"`
}

// events numbers commits and spawns, prints them, and freezes the program
// at the stop point.
type events struct {
	mu      sync.Mutex
	n       int
	stopAt  int
	stopped bool
	frozen  chan struct{} // never closed: what a frozen goroutine waits on
}

func (e *events) gate() {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		<-e.frozen
	}
}

func (e *events) event(format string, args ...any) {
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		<-e.frozen
	}
	e.n++
	line := fmt.Sprintf(format, append([]any{e.n}, args...)...)
	stop := e.n == e.stopAt
	if stop {
		e.stopped = true
		line += "\nstop"
	}
	say(line)
	e.mu.Unlock()
	if stop {
		<-e.frozen
	}
}

var outMu sync.Mutex

func say(line string) {
	outMu.Lock()
	defer outMu.Unlock()
	_, _ = os.Stdout.WriteString(line + "\n")
}

// eventStore prints an event after each Update that committed.
type eventStore struct {
	*badgerstore.Store
	ev *events
}

func (s eventStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	s.ev.gate()
	err := s.Store.Update(ctx, fn)
	if err == nil {
		s.ev.event("commit %d")
	}
	return err
}

// logEngine appends every launch to the launch log, fsynced, before it
// starts it.
type logEngine struct {
	*enginetest.Engine
	ev  *events
	log *os.File
	mu  sync.Mutex
}

func (e *logEngine) Start(ctx context.Context, req engine.StartRequest) (engine.Process, error) {
	e.ev.gate()
	l := LogLine{Launch: req.LaunchID, Session: req.Session, Attempt: req.Attempt, Turn: req.Turn, WS: req.Workspace}
	if req.Report != nil {
		l.Handoff = req.Report.Handoff
	}
	b, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	_, err = e.log.Write(append(b, '\n'))
	if err == nil {
		err = e.log.Sync()
	}
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	p, err := e.Engine.Start(ctx, req)
	if err == nil {
		e.ev.event("spawn %d " + string(req.LaunchID))
	}
	return p, err
}

func main() {
	dir := flag.String("dir", "", "badger directory")
	logPath := flag.String("log", "", "launch log")
	transfers := flag.Int("transfers", 2, "transfers to drive, one per workspace")
	stopAt := flag.Int("stop-at", 0, "freeze at this event (0: never)")
	recover := flag.Bool("recover", false, "run Recover and exit")
	flag.Parse()
	if err := run(*dir, *logPath, *transfers, *stopAt, *recover); err != nil {
		fmt.Fprintln(os.Stderr, "scripted:", err)
		os.Exit(1)
	}
}

func run(dir, logPath string, transfers, stopAt int, recover bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	bs, err := badgerstore.Open(dir, badgerstore.Options{Small: true})
	if err != nil {
		return err
	}
	defer bs.Close()
	ev := &events{stopAt: stopAt, frozen: make(chan struct{})}
	st := eventStore{Store: bs, ev: ev}
	var co *handoff.Coordinator
	eng := &logEngine{ev: ev, log: lf, Engine: enginetest.New(enginetest.Options{
		ScriptFor: func(req engine.StartRequest) (enginetest.Script, bool) {
			if req.Turn == transcript.ReportOnly {
				return enginetest.Script{Report: "# Report\ncrash test", ReportToken: enginetest.RightToken}, true
			}
			return enginetest.Script{}, true
		},
		Submit: func(ctx context.Context, cred engine.ReportCredentials, text string) error {
			return co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
		},
	})}
	defer eng.Close()
	reg := engine.Registry{"demo": eng}
	svc, err := session.New(st, reg, session.Options{})
	if err != nil {
		return err
	}
	co, err = handoff.New(svc, reg, handoff.WithTimeouts(handoff.Timeouts{Poll: 5 * time.Millisecond}))
	if err != nil {
		return err
	}
	defer func() { _ = co.Shutdown(context.WithoutCancel(ctx)) }()
	if recover {
		res, err := co.Recover(ctx)
		if err != nil {
			return err
		}
		say(fmt.Sprintf("recovered %d", len(res.Handoffs)))
		return nil
	}
	var srcs []store.Session
	for i := range transfers {
		ws := baton.WorkspaceID(fmt.Sprintf("ws-%d", i))
		if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Mission: "crash", Config: baton.EngineConfig{Engine: "demo", Model: "a"}}); err != nil {
			if errors.Is(err, store.ErrDuplicate) || errors.Is(err, baton.ErrConflict) {
				return fmt.Errorf("directory already used: %w", err)
			}
			return err
		}
		src, err := svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: "work"})
		if err != nil {
			return err
		}
		if _, err := svc.ScheduleWakeup(ctx, store.Wakeup{Workspace: ws, Session: src.ID, Prompt: "check CI", At: time.Now().Add(24 * time.Hour)}); err != nil {
			return err
		}
		srcs = append(srcs, src)
	}
	for i, src := range srcs {
		h, err := co.Create(ctx, handoff.Request{Workspace: src.Workspace, RequestID: "r", SourceSession: src.ID,
			GenerateSummary: i%2 == 1, Target: baton.EngineConfig{Engine: "demo", Model: "b"}})
		if err != nil {
			return err
		}
		say("created " + string(h.ID))
		if h, err = co.Wait(ctx, src.Workspace, h.ID); err != nil {
			return err
		}
		say(fmt.Sprintf("settled %s %s", h.ID, h.State))
	}
	say("done")
	return nil
}
