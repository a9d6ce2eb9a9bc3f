package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/batonhq/baton/internal/clock"
)

// gateRuntime is Scripted whose prompt "gate" is held inside Prompt (a
// host request in flight, no turn running) until the test opens the gate.
type gateRuntime struct {
	*Scripted
	entered chan struct{}
	gate    chan struct{}
}

type gateSession struct {
	*scriptedSession
	rt gateRuntime
}

func newGateRuntime() gateRuntime {
	return gateRuntime{Scripted: NewScripted(ScriptedOptions{}), entered: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (g gateRuntime) Open(ctx context.Context, req OpenRequest) (Session, error) {
	s, err := g.Scripted.Open(ctx, req)
	if err != nil {
		return nil, err
	}
	return gateSession{scriptedSession: s.(*scriptedSession), rt: g}, nil
}

func (s gateSession) Prompt(ctx context.Context, text string) error {
	if text == "gate" {
		s.rt.entered <- struct{}{}
		select {
		case <-s.rt.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.scriptedSession.Prompt(ctx, text)
}

func TestDrainIdleAttachedSession(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{InstanceID: "host_old", Generation: 3})
	next := serveHost(t, NewScripted(ScriptedOptions{}), Options{InstanceID: "host_new", Generation: 4, ClaimDir: s.h.opts.ClaimDir})
	w := dial(t, s.sock)
	bare := dial(t, s.sock) // holds nothing: told, then closed at once
	bare.mustCall(Command{Type: CmdGetProtocolInfo})
	path := s.file("a.jsonl")
	id := w.open(path)
	w.mustCall(Command{Type: CmdPrompt, SessionID: id, Text: "hi"})
	w.waitFor("agent_settled", isEvent(EventAgentSettled, id))

	if err := s.h.Drain(&Successor{Socket: next.sock}); err != nil {
		t.Fatal(err)
	}
	sup := w.waitFor("host_superseded", isType(EventHostSuperseded))
	if sup.InstanceID != "host_old" || sup.Generation != 3 || sup.Successor == nil || sup.Successor.Socket != next.sock {
		t.Errorf("host_superseded = %s", sup.Raw)
	}
	parked := w.waitFor("session_closed", isEvent(EventSessionClosed, id))
	if parked.Reason != ReasonHandoffParked || parked.SessionPath != path {
		t.Errorf("session_closed = %s", parked.Raw)
	}
	// The successor opens the released file at once: no retry.
	n := dial(t, next.sock)
	nid := n.open(path)
	if st := n.state(nid).State.(map[string]any); st["turns"] != float64(1) {
		t.Errorf("successor state = %v, want the earlier turn", st)
	}
	w.waitClosed()
	s.waitDone(t)
	bare.waitClosed()
	checkOrder(t, wireOrder(w.records(), id, EventAgentSettled, EventSessionClosed, TypeResponse),
		[]string{EventHostSuperseded, "session_closed:handoff_parked"})
	checkOrder(t, labels(bare.records()), []string{"response:get_protocol_info", EventHostSuperseded})
}

func TestDrainMidTurnWaitsPastGrace(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{Grace: 20e6, Logger: zap.New(core)})
	w := dial(t, s.sock)
	id := w.open(s.file("a.jsonl"))
	w.mustCall(Command{Type: CmdPrompt, SessionID: id, Text: "sleep 60000"})
	w.waitFor("agent_start", isEvent(EventAgentStart, id))
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	if sup := w.waitFor("host_superseded", isType(EventHostSuperseded)); sup.Successor != nil {
		t.Errorf("successor = %+v, want null", sup.Successor)
	}
	// Served mid-turn on the old connection.
	if st := w.state(id); !st.Busy || st.Activity == nil || !st.Activity.Turn || !st.Draining {
		t.Errorf("get_state mid-turn = %+v", st)
	}
	if _, err := w.call(Command{Type: CmdOpenSession, SessionPath: s.file("b.jsonl")}); !errors.Is(err, ErrDraining) {
		t.Errorf("open_session while draining = %v, want host_draining", err)
	}
	grace := waitLog(t, logs, "handoff grace expired; generation still held")
	held := grace.ContextMap()["holding"].([]any)
	if len(held) != 1 || held[0].(map[string]any)["sessionId"] != id || grace.ContextMap()["sessionsHeld"] != int64(1) {
		t.Fatalf("grace report = %v", grace.ContextMap())
	}
	if why := held[0].(map[string]any)["why"].([]any); len(why) != 1 || why[0] != "turn" {
		t.Errorf("why = %v, want [turn]", why)
	}
	if w.isClosed() || len(s.h.Holding()) != 1 {
		t.Fatal("the grace cut the turn short")
	}
	w.mustCall(Command{Type: CmdAbort, SessionID: id}) // the turn ends; now it parks
	w.waitClosed()
	s.waitDone(t)
	checkOrder(t, wireOrder(w.records(), id, EventAgentSettled, EventSessionClosed),
		[]string{EventHostSuperseded, EventAgentSettled, "session_closed:handoff_parked"})
}

func TestDrainIgnoresDurableWakeSources(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{})
	w := dial(t, s.sock)
	id := w.open(s.file("a.jsonl"))
	w.mustCall(Command{Type: CmdPrompt, SessionID: id, Text: "wake"})
	w.waitFor("agent_settled", isEvent(EventAgentSettled, id))
	if st := w.state(id); st.Busy || st.Activity.WakeSources != 1 {
		t.Fatalf("get_state = %+v, want idle with one wake source", st)
	}
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	// The default grace is ten minutes: a wake source that held the
	// session would fail this wait.
	w.waitFor("session_closed", isEvent(EventSessionClosed, id))
	s.waitDone(t)
}

func TestSecondDrainAnnouncesNothing(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{})
	w := dial(t, s.sock)
	id := w.open(s.file("a.jsonl"))
	w.mustCall(Command{Type: CmdPrompt, SessionID: id, Text: "sleep 60000"})
	if err := s.h.Drain(&Successor{Socket: "/first"}); err != nil {
		t.Fatal(err)
	}
	w.waitFor("host_superseded", isType(EventHostSuperseded))
	for _, succ := range []*Successor{{Socket: "/second"}, nil} {
		if err := s.h.Drain(succ); err != nil {
			t.Fatal(err)
		}
	}
	w.mustCall(Command{Type: CmdAbort, SessionID: id})
	w.waitClosed()
	s.waitDone(t)
	var sups []Record
	for _, r := range w.records() {
		if r.Type == EventHostSuperseded {
			sups = append(sups, r)
		}
	}
	if len(sups) != 1 || sups[0].Successor == nil || sups[0].Successor.Socket != "/first" {
		t.Fatalf("host_superseded records = %v, want one naming /first", labels(sups))
	}
}

func TestDrainKeepsSharedConnectionWhileBusy(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{})
	w := dial(t, s.sock)
	busy := w.open(s.file("busy.jsonl"))
	idle := w.open(s.file("idle.jsonl"))
	w.mustCall(Command{Type: CmdPrompt, SessionID: busy, Text: "sleep 60000"})
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	w.waitFor("idle session parked", isEvent(EventSessionClosed, idle))
	// Still open and served for the busy session.
	if st := w.state(busy); !st.Busy {
		t.Errorf("busy session state = %+v", st)
	}
	// The parked handle answers the terminal record, never unknown_session.
	_, err := w.call(Command{Type: CmdGetState, SessionID: idle})
	var re *RemoteError
	if !errors.Is(err, ErrSessionClosed) || !errors.As(err, &re) {
		t.Fatalf("get_state of a parked handle = %v, want session_closed", err)
	}
	if string(re.Data) == "" || !strings.Contains(string(re.Data), `"reason":"handoff_parked"`) {
		t.Errorf("errorData = %s", re.Data)
	}
	if w.isClosed() {
		t.Fatal("shared connection closed while a session is busy")
	}
	w.mustCall(Command{Type: CmdAbort, SessionID: busy})
	w.waitClosed()
	s.waitDone(t)
	checkOrder(t, wireOrder(w.records(), busy, EventAgentSettled, EventSessionClosed, "response:get_state"),
		[]string{EventHostSuperseded, "response:get_state", "response:get_state:session_closed", EventAgentSettled, "session_closed:handoff_parked"})
}

func TestNoParkWhileHostRequestInFlight(t *testing.T) {
	t.Parallel()
	rt := newGateRuntime()
	s := serveHost(t, rt, Options{})
	w := dial(t, s.sock)
	id := w.open(s.file("a.jsonl"))
	if _, err := w.c.Send(Command{ID: "held", Type: CmdPrompt, SessionID: id, Text: "gate"}); err != nil {
		t.Fatal(err)
	}
	<-rt.entered
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	w.waitFor("host_superseded", isType(EventHostSuperseded))
	held := s.h.Holding()
	if len(held) != 1 || held[0].HostRequests != 1 || held[0].Why()[0] != "host_request" {
		t.Fatalf("Holding = %+v, want the in-flight request", held)
	}
	close(rt.gate)
	w.waitClosed()
	s.waitDone(t)
	// The park waited for the response, which follows the echo's events.
	checkOrder(t, wireOrder(w.records(), id, EventAgentStart, EventMessage, EventAgentSettled, "response:prompt", EventSessionClosed),
		[]string{EventHostSuperseded, EventAgentStart, EventMessage, EventAgentSettled, "response:prompt", "session_closed:handoff_parked"})
}

func TestDrainParksUnattachedSessions(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{})
	w := dial(t, s.sock)
	w.open(s.file("a.jsonl"))
	if err := w.c.Close(); err != nil {
		t.Fatal(err)
	}
	if held := s.h.Holding(); len(held) != 1 {
		t.Fatalf("a client leaving closed its session: %+v", held)
	}
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	s.waitDone(t)
	if _, err := os.Stat(s.file("a.jsonl")); err != nil {
		t.Fatal(err)
	}
}

func TestDrainEmptyHostFinishesAtOnce(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{})
	if err := s.h.Drain(nil); err != nil {
		t.Fatal(err)
	}
	s.waitDone(t)
	if err := s.h.Wait(context.Background()); err != nil {
		t.Errorf("Wait after drain = %v", err)
	}
}

// Runtimes without the optional capabilities still park and exit: with no
// snapshot every session counts as idle (even mid-turn); with a snapshot
// but no settle subscription the sweep parks once the turn ends.
func TestDrainWithoutRuntimeHooks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   ScriptedOptions
		prompt string
		abort  bool // end the turn once the drain is under way
		want   []string
	}{
		{"no hooks: parked even mid-turn", ScriptedOptions{NoActivity: true, NoSettle: true}, "sleep 600000", false,
			[]string{EventHostSuperseded, EventAgentSettled, "session_closed:handoff_parked"}},
		{"activity only: the sweep parks after the turn", ScriptedOptions{NoSettle: true}, "sleep 600000", true,
			[]string{EventHostSuperseded, EventAgentSettled, "session_closed:handoff_parked"}},
		{"settle only: idle at once", ScriptedOptions{NoActivity: true}, "hello", false,
			[]string{EventHostSuperseded, "session_closed:handoff_parked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := serveHost(t, NewScripted(tt.opts), Options{})
			w := dial(t, s.sock)
			id := w.open(s.file("a.jsonl"))
			idle := w.open(s.file("idle.jsonl"))
			w.mustCall(Command{Type: CmdPrompt, SessionID: id, Text: tt.prompt})
			w.waitFor("agent_start", isEvent(EventAgentStart, id))
			if tt.prompt == "hello" {
				w.waitFor("agent_settled", isEvent(EventAgentSettled, id))
			}
			if err := s.h.Drain(nil); err != nil {
				t.Fatal(err)
			}
			if tt.abort {
				w.waitFor("idle parked", isEvent(EventSessionClosed, idle))
				if held := s.h.Holding(); len(held) != 1 || !slices.Contains(held[0].Why(), "turn") {
					t.Fatalf("holding %+v, want the running turn", held)
				}
				w.mustCall(Command{Type: CmdAbort, SessionID: id})
			}
			w.waitClosed()
			s.waitDone(t)
			checkOrder(t, wireOrder(w.records(), id, EventAgentSettled, EventSessionClosed), tt.want)
			checkOrder(t, wireOrder(w.records(), idle, EventSessionClosed), []string{EventHostSuperseded, "session_closed:handoff_parked"})
		})
	}
}

func waitLog(t *testing.T, logs *observer.ObservedLogs, msg string) observer.LoggedEntry {
	t.Helper()
	pollUntil(t, "log "+msg, func() bool { return logs.FilterMessage(msg).Len() > 0 })
	got := logs.FilterMessage(msg).All()
	if len(got) != 1 {
		t.Fatalf("%d %q events, want one", len(got), msg)
	}
	return got[0]
}

// Idle eviction keeps its broader predicate: an unattached idle session is
// evicted, one holding a durable wake source is not, an attached one never
// is. The same wake source does not hold a drain (see
// TestDrainIgnoresDurableWakeSources).
func TestIdleEvictionCountsWakeSources(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Unix(1_700_000_000, 0))
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{IdleEvict: time.Minute, clock: fake})
	leaving := dial(t, s.sock)
	plain := leaving.open(s.file("plain.jsonl"))
	woken := leaving.open(s.file("woken.jsonl"))
	leaving.mustCall(Command{Type: CmdPrompt, SessionID: woken, Text: "wake"})
	if err := leaving.c.Close(); err != nil {
		t.Fatal(err)
	}
	stays := dial(t, s.sock)
	stays.open(s.file("attached.jsonl"))
	pollUntil(t, "first client detached", func() bool {
		for _, o := range s.h.Holding() {
			if o.SessionID == plain && o.Attachments == 0 {
				return true
			}
		}
		return false
	})
	for range 3 { // first sighting, then a minute and more
		<-fake.WaitTimers(1)
		fake.Advance(time.Minute)
	}
	pollUntil(t, "eviction", func() bool { return len(s.h.Holding()) == 2 })
	var left []string
	for _, o := range s.h.Holding() {
		left = append(left, filepath.Base(o.SessionPath))
	}
	if d := cmp.Diff([]string{"attached.jsonl", "woken.jsonl"}, left); d != "" {
		t.Errorf("sessions left (-want +got):\n%s", d)
	}
}
