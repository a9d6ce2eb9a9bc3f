package hosttest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/host"
)

// NewScripted returns a host.Runtime for demos, tests and benchmarks. Its
// sessions append every prompt to the session file (one JSON line each) and
// hold it open until closed; a reopened file resumes its turn count. Prompts:
//
//   - "sleep <ms>": the turn runs for that many milliseconds
//     (agent_start, then agent_settled);
//   - "hold <ms>": the prompt itself takes that long to be accepted, with
//     no turn running, so only the host's in-flight request holds the
//     session; then it echoes;
//   - "wake": registers a durable wake source (it never ends) and echoes;
//   - anything else settles at once and echoes the text in a message
//     event (agent_start, message, agent_settled).
//
// A prompt that arrives while a turn runs is queued and runs next. Abort
// ends the running turn (agent_settled with aborted true) and drops the
// queue. Sessions offer both optional capabilities unless opts removes
// them. Its sessions' State is {turns, running, queued, wakeSources}, turns
// counting the prompts in the file, earlier generations' included.
func NewScripted(opts ScriptedOptions) host.Runtime { return &scripted{opts: opts} }

type scripted struct{ opts ScriptedOptions }

// ScriptedOptions tune the runtime of NewScripted. The zero value offers both
// optional capabilities.
type ScriptedOptions struct {
	// NoActivity removes the Activity method from its sessions.
	NoActivity bool
	// NoSettle removes the Settled method from its sessions.
	NoSettle bool
	// OnSettle, when set, is called under the session's lock each time a
	// turn ends with nothing queued (a benchmark's timestamp, say).
	OnSettle func()
}

// scriptedState is the State of a scripted session.
type scriptedState struct {
	Turns       int  `json:"turns"`
	Running     bool `json:"running"`
	Queued      int  `json:"queued"`
	WakeSources int  `json:"wakeSources"`
}

// Open opens or creates the session file at req.Path. It returns a
// host.ErrRuntime error when the file cannot be opened or read. With both
// optional capabilities the session is a *ScriptedSession.
func (s *scripted) Open(ctx context.Context, req host.OpenRequest) (host.Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(req.Path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, baton.Errorf(host.ErrRuntime, "scripted: open %s: %v", req.Path, err)
	}
	turns, err := countLines(f)
	if err != nil {
		_ = f.Close()
		return nil, baton.Errorf(host.ErrRuntime, "scripted: read %s: %v", req.Path, err)
	}
	emit := req.Emit
	if emit == nil {
		emit = func(string, map[string]any) {}
	}
	ss := &ScriptedSession{f: f, emit: emit, turns: turns, onSettle: s.opts.OnSettle,
		settled: make(chan struct{}, 1), closing: make(chan struct{})}
	switch {
	case s.opts.NoActivity && s.opts.NoSettle:
		return plainSession{ss}, nil
	case s.opts.NoActivity:
		return settleOnlySession{ss, ss}, nil
	case s.opts.NoSettle:
		return activityOnlySession{ss, ss}, nil
	}
	return ss, nil
}

type plainSession struct{ host.Session }

type settleOnlySession struct {
	host.Session
	settler
}

type activityOnlySession struct {
	host.Session
	activityReporter
}

// settler and activityReporter are the optional capabilities of a
// host.Session.
type (
	settler          interface{ Settled() <-chan struct{} }
	activityReporter interface{ Activity() engine.Activity }
)

func countLines(f *os.File) (int, error) {
	b, err := io.ReadAll(f)
	return bytes.Count(b, []byte{'\n'}), err
}

// ScriptedSession is a session of NewScripted's runtime with both optional
// capabilities, for a test's runtime that wraps it.
type ScriptedSession struct {
	f        *os.File
	emit     func(string, map[string]any)
	onSettle func()
	settled  chan struct{}
	closing  chan struct{}
	timers   sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	running bool
	turnID  int
	timer   *time.Timer
	queue   []string
	wake    int
	turns   int
}

func parseMillis(text, verb string) (time.Duration, bool) {
	f := strings.Fields(text)
	if len(f) != 2 || f[0] != verb {
		return 0, false
	}
	ms, err := strconv.Atoi(f[1])
	if err != nil || ms < 0 || ms > int(time.Hour/time.Millisecond) {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// Prompt records text in the session file and runs or queues it.
func (s *ScriptedSession) Prompt(ctx context.Context, text string) error {
	if d, ok := parseMillis(text, "hold"); ok {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-s.closing:
			t.Stop()
			return host.ErrSessionClosed
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return host.ErrSessionClosed
	}
	rec, _ := json.Marshal(map[string]string{"prompt": text})
	if _, err := s.f.Write(append(rec, '\n')); err != nil {
		return baton.Errorf(host.ErrRuntime, "scripted: record prompt: %v", err)
	}
	s.turns++
	if s.running {
		s.queue = append(s.queue, text)
		return nil
	}
	s.startLocked(text)
	return nil
}

// startLocked runs text, and then every queued prompt that settles at once,
// until a timed turn is running or the queue is empty.
func (s *ScriptedSession) startLocked(text string) {
	for {
		s.running = true
		s.turnID++
		s.emit("agent_start", nil)
		if d, ok := parseMillis(text, "sleep"); ok {
			id := s.turnID
			s.timers.Add(1)
			s.timer = time.AfterFunc(d, func() {
				defer s.timers.Done()
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.closed || s.turnID != id || !s.running {
					return
				}
				s.timer = nil
				s.settleLocked(false)
			})
			return
		}
		if strings.TrimSpace(text) == "wake" {
			s.wake++
		}
		s.emit("message", map[string]any{"text": text})
		s.endTurnLocked(false)
		if len(s.queue) == 0 {
			s.notifySettled()
			return
		}
		text, s.queue = s.queue[0], s.queue[1:]
	}
}

func (s *ScriptedSession) endTurnLocked(aborted bool) {
	fields := map[string]any(nil)
	if aborted {
		fields = map[string]any{"aborted": true}
	}
	s.emit("agent_settled", fields)
	s.running = false
	if s.onSettle != nil && len(s.queue) == 0 {
		s.onSettle()
	}
}

// settleLocked ends the timed turn and starts the next queued prompt.
func (s *ScriptedSession) settleLocked(aborted bool) {
	s.endTurnLocked(aborted)
	if len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		s.startLocked(next)
		return
	}
	s.notifySettled()
}

func (s *ScriptedSession) notifySettled() {
	select {
	case s.settled <- struct{}{}:
	default:
	}
}

// stopTimerLocked cancels a timed turn's timer; the callback, if it already
// started, sees the turn gone and returns.
func (s *ScriptedSession) stopTimerLocked() {
	if s.timer != nil && s.timer.Stop() {
		s.timers.Done()
	}
	s.timer = nil
}

// Abort ends the running turn and drops the queue.
func (s *ScriptedSession) Abort(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return host.ErrSessionClosed
	}
	if !s.running {
		return nil
	}
	s.stopTimerLocked()
	s.queue = nil
	s.settleLocked(true)
	return nil
}

// State returns {turns, running, queued, wakeSources}.
func (s *ScriptedSession) State(ctx context.Context) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return scriptedState{Turns: s.turns, Running: s.running, Queued: len(s.queue), WakeSources: s.wake}, nil
}

// Close ends a running turn (aborted) and closes the session file.
func (s *ScriptedSession) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	if s.running {
		s.stopTimerLocked()
		s.queue = nil
		s.endTurnLocked(true)
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.timers.Wait()
	return s.f.Close()
}

// Activity reports the running turn, the queue and the wake sources.
func (s *ScriptedSession) Activity() engine.Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return engine.Activity{Turn: s.running, Queued: len(s.queue), WakeSources: s.wake}
}

// Settled receives a value each time the session becomes idle.
func (s *ScriptedSession) Settled() <-chan struct{} { return s.settled }
