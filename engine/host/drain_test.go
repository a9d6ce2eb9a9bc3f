package host_test

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

	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine/host"
	"github.com/batonhq/baton/engine/host/hosttest"
)

// gateRuntime is host.Scripted whose prompt "gate" is held inside Prompt (a
// host request in flight, no turn running) until the test opens the gate.
type gateRuntime struct {
	*host.Scripted
	entered chan struct{}
	gate    chan struct{}
}

type gateSession struct {
	*host.ScriptedSession
	rt gateRuntime
}

func newGateRuntime() gateRuntime {
	return gateRuntime{Scripted: host.NewScripted(host.ScriptedOptions{}), entered: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (g gateRuntime) Open(ctx context.Context, req host.OpenRequest) (host.Session, error) {
	s, err := g.Scripted.Open(ctx, req)
	if err != nil {
		return nil, err
	}
	return gateSession{ScriptedSession: s.(*host.ScriptedSession), rt: g}, nil
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
	return s.ScriptedSession.Prompt(ctx, text)
}

func TestDrainIdleAttachedSession(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{InstanceID: "host_old", Generation: 3})
	next := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{InstanceID: "host_new", Generation: 4, ClaimDir: s.ClaimDir})
	w := hosttest.Dial(t, s.Socket)
	bare := hosttest.Dial(t, s.Socket) // holds nothing: told, then closed at once
	bare.MustCall(host.Command{Type: host.CmdGetProtocolInfo})
	path := s.File("a.jsonl")
	id := w.Open(path)
	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: "hi"})
	w.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, id))

	if err := s.Host.Drain(&host.Successor{Socket: next.Socket}); err != nil {
		t.Fatal(err)
	}
	sup := w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
	if sup.InstanceID != "host_old" || sup.Generation != 3 || sup.Successor == nil || sup.Successor.Socket != next.Socket {
		t.Errorf("host_superseded = %s", sup.Raw)
	}
	parked := w.WaitFor("session_closed", hosttest.IsEvent(host.EventSessionClosed, id))
	if parked.Reason != host.ReasonHandoffParked || parked.SessionPath != path {
		t.Errorf("session_closed = %s", parked.Raw)
	}
	// The successor opens the released file at once: no retry.
	n := hosttest.Dial(t, next.Socket)
	nid := n.Open(path)
	if st := n.State(nid).State.(map[string]any); st["turns"] != float64(1) {
		t.Errorf("successor state = %v, want the earlier turn", st)
	}
	w.WaitClosed()
	s.WaitDone(t)
	bare.WaitClosed()
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, host.EventAgentSettled, host.EventSessionClosed, host.TypeResponse),
		[]string{host.EventHostSuperseded, "session_closed:handoff_parked"})
	hosttest.CheckOrder(t, hosttest.Labels(bare.Records()), []string{"response:get_protocol_info", host.EventHostSuperseded})
}

func TestDrainMidTurnWaitsPastGrace(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	s, w, id := serveAndOpen(t, host.NewScripted(host.ScriptedOptions{}), host.Options{Grace: 20e6, Logger: zap.New(core)})
	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: "sleep 60000"})
	w.WaitFor("agent_start", hosttest.IsEvent(host.EventAgentStart, id))
	if err := s.Host.Drain(nil); err != nil {
		t.Fatal(err)
	}
	if sup := w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded)); sup.Successor != nil {
		t.Errorf("successor = %+v, want null", sup.Successor)
	}
	// Served mid-turn on the old connection.
	if st := w.State(id); !st.Busy || st.Activity == nil || !st.Activity.Turn || !st.Draining {
		t.Errorf("get_state mid-turn = %+v", st)
	}
	if _, err := w.Call(host.Command{Type: host.CmdOpenSession, SessionPath: s.File("b.jsonl")}); !errors.Is(err, host.ErrDraining) {
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
	if w.IsClosed() || len(s.Host.Holding()) != 1 {
		t.Fatal("the grace cut the turn short")
	}
	w.MustCall(host.Command{Type: host.CmdAbort, SessionID: id}) // the turn ends; now it parks
	w.WaitClosed()
	s.WaitDone(t)
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, host.EventAgentSettled, host.EventSessionClosed),
		[]string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked"})
}

func TestDrainIgnoresDurableWakeSources(t *testing.T) {
	t.Parallel()
	s, w, id := serveAndOpen(t, host.NewScripted(host.ScriptedOptions{}), host.Options{})
	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: "wake"})
	w.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, id))
	if st := w.State(id); st.Busy || st.Activity.WakeSources != 1 {
		t.Fatalf("get_state = %+v, want idle with one wake source", st)
	}
	if err := s.Host.Drain(nil); err != nil {
		t.Fatal(err)
	}
	// The default grace is ten minutes: a wake source that held the
	// session would fail this wait.
	w.WaitFor("session_closed", hosttest.IsEvent(host.EventSessionClosed, id))
	s.WaitDone(t)
}

func TestSecondDrainAnnouncesNothing(t *testing.T) {
	t.Parallel()
	s, w, id := serveAndOpen(t, host.NewScripted(host.ScriptedOptions{}), host.Options{})
	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: "sleep 60000"})
	if err := s.Host.Drain(&host.Successor{Socket: "/first"}); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
	for _, succ := range []*host.Successor{{Socket: "/second"}, nil} {
		if err := s.Host.Drain(succ); err != nil {
			t.Fatal(err)
		}
	}
	w.MustCall(host.Command{Type: host.CmdAbort, SessionID: id})
	w.WaitClosed()
	s.WaitDone(t)
	var sups []host.Record
	for _, r := range w.Records() {
		if r.Type == host.EventHostSuperseded {
			sups = append(sups, r)
		}
	}
	if len(sups) != 1 || sups[0].Successor == nil || sups[0].Successor.Socket != "/first" {
		t.Fatalf("host_superseded records = %v, want one naming /first", hosttest.Labels(sups))
	}
}

func TestDrainKeepsSharedConnectionWhileBusy(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{})
	w := hosttest.Dial(t, s.Socket)
	busy := w.Open(s.File("busy.jsonl"))
	idle := w.Open(s.File("idle.jsonl"))
	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: busy, Text: "sleep 60000"})
	if err := s.Host.Drain(nil); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("idle session parked", hosttest.IsEvent(host.EventSessionClosed, idle))
	// Still open and served for the busy session.
	if st := w.State(busy); !st.Busy {
		t.Errorf("busy session state = %+v", st)
	}
	// The parked handle answers the terminal record, never unknown_session.
	_, err := w.Call(host.Command{Type: host.CmdGetState, SessionID: idle})
	var re *host.RemoteError
	if !errors.Is(err, host.ErrSessionClosed) || !errors.As(err, &re) {
		t.Fatalf("get_state of a parked handle = %v, want session_closed", err)
	}
	if string(re.Data) == "" || !strings.Contains(string(re.Data), `"reason":"handoff_parked"`) {
		t.Errorf("errorData = %s", re.Data)
	}
	if w.IsClosed() {
		t.Fatal("shared connection closed while a session is busy")
	}
	w.MustCall(host.Command{Type: host.CmdAbort, SessionID: busy})
	w.WaitClosed()
	s.WaitDone(t)
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), busy, host.EventAgentSettled, host.EventSessionClosed, "response:get_state"),
		[]string{host.EventHostSuperseded, "response:get_state", "response:get_state:session_closed", host.EventAgentSettled, "session_closed:handoff_parked"})
}

func TestNoParkWhileHostRequestInFlight(t *testing.T) {
	t.Parallel()
	rt := newGateRuntime()
	s, w, id := serveAndOpen(t, rt, host.Options{})
	if _, err := w.Client().Send(host.Command{ID: "held", Type: host.CmdPrompt, SessionID: id, Text: "gate"}); err != nil {
		t.Fatal(err)
	}
	<-rt.entered
	if err := s.Host.Drain(nil); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
	held := s.Host.Holding()
	if len(held) != 1 || held[0].HostRequests != 1 || held[0].Why()[0] != "host_request" {
		t.Fatalf("Holding = %+v, want the in-flight request", held)
	}
	close(rt.gate)
	w.WaitClosed()
	s.WaitDone(t)
	// The park waited for the response, which follows the echo's events.
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, host.EventAgentStart, host.EventMessage, host.EventAgentSettled, "response:prompt", host.EventSessionClosed),
		[]string{host.EventHostSuperseded, host.EventAgentStart, host.EventMessage, host.EventAgentSettled, "response:prompt", "session_closed:handoff_parked"})
}

func TestDrainParksUnattachedSessions(t *testing.T) {
	t.Parallel()
	s, w, _ := serveAndOpen(t, host.NewScripted(host.ScriptedOptions{}), host.Options{})
	if err := w.Client().Close(); err != nil {
		t.Fatal(err)
	}
	if held := s.Host.Holding(); len(held) != 1 {
		t.Fatalf("a client leaving closed its session: %+v", held)
	}
	if err := s.Host.Drain(nil); err != nil {
		t.Fatal(err)
	}
	s.WaitDone(t)
	if _, err := os.Stat(s.File("a.jsonl")); err != nil {
		t.Fatal(err)
	}
}

func TestDrainEmptyHostFinishesAtOnce(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{})
	if err := s.Host.Drain(nil); err != nil {
		t.Fatal(err)
	}
	s.WaitDone(t)
	if err := s.Host.Wait(context.Background()); err != nil {
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
		opts   host.ScriptedOptions
		prompt string
		abort  bool // end the turn once the drain is under way
		want   []string
	}{
		{"no hooks: parked even mid-turn", host.ScriptedOptions{NoActivity: true, NoSettle: true}, "sleep 600000", false,
			[]string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked"}},
		{"activity only: the sweep parks after the turn", host.ScriptedOptions{NoSettle: true}, "sleep 600000", true,
			[]string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked"}},
		{"settle only: idle at once", host.ScriptedOptions{NoActivity: true}, "hello", false,
			[]string{host.EventHostSuperseded, "session_closed:handoff_parked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, w, id := serveAndOpen(t, host.NewScripted(tt.opts), host.Options{})
			idle := w.Open(s.File("idle.jsonl"))
			w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: tt.prompt})
			w.WaitFor("agent_start", hosttest.IsEvent(host.EventAgentStart, id))
			if tt.prompt == "hello" {
				w.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, id))
			}
			if err := s.Host.Drain(nil); err != nil {
				t.Fatal(err)
			}
			if tt.abort {
				w.WaitFor("idle parked", hosttest.IsEvent(host.EventSessionClosed, idle))
				if held := s.Host.Holding(); len(held) != 1 || !slices.Contains(held[0].Why(), "turn") {
					t.Fatalf("holding %+v, want the running turn", held)
				}
				w.MustCall(host.Command{Type: host.CmdAbort, SessionID: id})
			}
			w.WaitClosed()
			s.WaitDone(t)
			hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, host.EventAgentSettled, host.EventSessionClosed), tt.want)
			hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), idle, host.EventSessionClosed), []string{host.EventHostSuperseded, "session_closed:handoff_parked"})
		})
	}
}

// serveAndOpen serves a host on rt and opens the session a.jsonl on a
// connection to it: the start of most drain tests.
func serveAndOpen(t *testing.T, rt host.Runtime, opts host.Options) (*hosttest.Served, *hosttest.Conn, string) {
	t.Helper()
	s := hosttest.Serve(t, rt, opts)
	w := hosttest.Dial(t, s.Socket)
	return s, w, w.Open(s.File("a.jsonl"))
}

func waitLog(t *testing.T, logs *observer.ObservedLogs, msg string) observer.LoggedEntry {
	t.Helper()
	hosttest.PollUntil(t, "log "+msg, func() bool { return logs.FilterMessage(msg).Len() > 0 })
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
	s := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.WithClock(host.Options{IdleEvict: time.Minute}, fake))
	leaving := hosttest.Dial(t, s.Socket)
	plain := leaving.Open(s.File("plain.jsonl"))
	woken := leaving.Open(s.File("woken.jsonl"))
	leaving.MustCall(host.Command{Type: host.CmdPrompt, SessionID: woken, Text: "wake"})
	if err := leaving.Client().Close(); err != nil {
		t.Fatal(err)
	}
	stays := hosttest.Dial(t, s.Socket)
	stays.Open(s.File("attached.jsonl"))
	hosttest.PollUntil(t, "first client detached", func() bool {
		for _, o := range s.Host.Holding() {
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
	hosttest.PollUntil(t, "eviction", func() bool { return len(s.Host.Holding()) == 2 })
	var left []string
	for _, o := range s.Host.Holding() {
		left = append(left, filepath.Base(o.SessionPath))
	}
	if d := cmp.Diff([]string{"attached.jsonl", "woken.jsonl"}, left); d != "" {
		t.Errorf("sessions left (-want +got):\n%s", d)
	}
}
