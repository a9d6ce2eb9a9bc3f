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
	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// gateRuntime is host.Scripted whose prompt "gate" is held inside Prompt (a
// host request in flight, no turn running) until the test opens the gate.
type gateRuntime struct {
	host.Runtime
	entered chan struct{}
	gate    chan struct{}
}

type gateSession struct {
	*hosttest.ScriptedSession
	rt gateRuntime
}

func newGateRuntime() gateRuntime {
	return gateRuntime{Runtime: hosttest.NewScripted(hosttest.ScriptedOptions{}), entered: make(chan struct{}, 16), gate: make(chan struct{})}
}

func (g gateRuntime) Open(ctx context.Context, req host.OpenRequest) (host.Session, error) {
	s, err := g.Runtime.Open(ctx, req)
	if err != nil {
		return nil, err
	}
	return gateSession{ScriptedSession: s.(*hosttest.ScriptedSession), rt: g}, nil
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
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{InstanceID: "host_old", Generation: 3})
	next := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{InstanceID: "host_new", Generation: 4, ClaimDir: s.ClaimDir})
	w := hosttest.Dial(t, s.Socket)
	bare := hosttest.Dial(t, s.Socket) // holds nothing: told, then closed at once
	bare.Info()
	path := s.File("a.jsonl")
	id := w.Open(path)
	w.Prompt(id, "hi")
	w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))

	if err := s.Host.Drain(next.Socket); err != nil {
		t.Fatal(err)
	}
	sup := w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
	if sup.InstanceID != "host_old" || sup.Generation != 3 || sup.Successor != next.Socket {
		t.Errorf("host_superseded = %s", sup.Raw)
	}
	parked := w.WaitFor("session_closed", hosttest.IsEvent("session_closed", id))
	if parked.Reason != "handoff_parked" || parked.SessionPath != path {
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
	if r, o := s.Host.Tracked(); r != 0 || o != 0 {
		t.Errorf("drained host still tracks %d reserved paths and %d open sessions", r, o)
	}
	bare.WaitClosed()
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, "agent_settled", "session_closed", "response"),
		[]string{"host_superseded", "session_closed:handoff_parked"})
	hosttest.CheckOrder(t, hosttest.Labels(bare.Records()), []string{"response:get_protocol_info", "host_superseded"})
}

func TestDrainMidTurnWaitsPastGrace(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.InfoLevel)
	s, w, id := serveAndOpen(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{Grace: 20e6, Logger: zap.New(core)})
	w.Prompt(id, "sleep 60000")
	w.WaitFor("agent_start", hosttest.IsEvent("agent_start", id))
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	if sup := w.WaitFor("host_superseded", hosttest.IsType("host_superseded")); sup.Successor != "" || !strings.Contains(string(sup.Raw), `"successor":null`) {
		t.Errorf("host_superseded = %s, want a null successor", sup.Raw)
	}
	// Served mid-turn on the old connection.
	if st := w.State(id); !st.Busy || st.Activity == nil || !st.Activity.Turn || !st.Draining {
		t.Errorf("get_state mid-turn = %+v", st)
	}
	if _, err := w.Client().Open(hosttest.Context(t), s.File("b.jsonl"), ""); !errors.Is(err, host.ErrDraining) {
		t.Errorf("open_session while draining = %v, want host_draining", err)
	}
	grace := waitLog(t, logs, "handoff grace expired; generation still held")
	held := grace.ContextMap()["holding"].([]host.Hold)
	if len(held) != 1 || held[0].SessionID != id || grace.ContextMap()["sessionsHeld"] != int64(1) {
		t.Fatalf("grace report = %v", grace.ContextMap())
	}
	if why := held[0].Why; len(why) != 1 || why[0] != "turn" {
		t.Errorf("why = %v, want [turn]", why)
	}
	if w.IsClosed() || len(s.Host.Holding()) != 1 {
		t.Fatal("the grace cut the turn short")
	}
	w.Abort(id) // the turn ends; now it parks
	w.WaitClosed()
	s.WaitDone(t)
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, "agent_settled", "session_closed"),
		[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked"})
}

func TestDrainIgnoresDurableWakeSources(t *testing.T) {
	t.Parallel()
	s, w, id := serveAndOpen(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	w.Prompt(id, "wake")
	w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))
	if st := w.State(id); st.Busy || st.Activity.WakeSources != 1 {
		t.Fatalf("get_state = %+v, want idle with one wake source", st)
	}
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	// The default grace is ten minutes: a wake source that held the
	// session would fail this wait.
	w.WaitFor("session_closed", hosttest.IsEvent("session_closed", id))
	s.WaitDone(t)
}

func TestSecondDrainAnnouncesNothing(t *testing.T) {
	t.Parallel()
	s, w, id := serveAndOpen(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	w.Prompt(id, "sleep 60000")
	if err := s.Host.Drain("/first"); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
	for _, succ := range []string{"/second", ""} {
		if err := s.Host.Drain(succ); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort(id)
	w.WaitClosed()
	s.WaitDone(t)
	var sups []host.Record
	for _, r := range w.Records() {
		if r.Type == "host_superseded" {
			sups = append(sups, r)
		}
	}
	if len(sups) != 1 || sups[0].Successor != "/first" {
		t.Fatalf("host_superseded records = %v, want one naming /first", hosttest.Labels(sups))
	}
}

func TestDrainKeepsSharedConnectionWhileBusy(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	w := hosttest.Dial(t, s.Socket)
	busy := w.Open(s.File("busy.jsonl"))
	idle := w.Open(s.File("idle.jsonl"))
	w.Prompt(busy, "sleep 60000")
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("idle session parked", hosttest.IsEvent("session_closed", idle))
	// Still open and served for the busy session.
	if st := w.State(busy); !st.Busy {
		t.Errorf("busy session state = %+v", st)
	}
	// The parked handle answers the terminal record, never unknown_session.
	_, err := w.Client().State(hosttest.Context(t), idle)
	if !errors.Is(err, host.ErrSessionClosed) {
		t.Fatalf("get_state of a parked handle = %v, want session_closed", err)
	}
	if data := host.ErrorData(err); !strings.Contains(string(data), `"reason":"handoff_parked"`) {
		t.Errorf("errorData = %s", data)
	}
	if w.IsClosed() {
		t.Fatal("shared connection closed while a session is busy")
	}
	w.Abort(busy)
	w.WaitClosed()
	s.WaitDone(t)
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), busy, "agent_settled", "session_closed", "response:get_state"),
		[]string{"host_superseded", "response:get_state", "response:get_state:session_closed", "agent_settled", "session_closed:handoff_parked"})
}

func TestNoParkWhileHostRequestInFlight(t *testing.T) {
	t.Parallel()
	rt := newGateRuntime()
	s, w, id := serveAndOpen(t, rt, host.Options{})
	prompted := make(chan error, 1)
	go func() { prompted <- w.Client().Prompt(hosttest.Context(t), id, "gate") }()
	<-rt.entered
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
	held := s.Host.Holding()
	if len(held) != 1 || held[0].HostRequests != 1 || held[0].Why[0] != "host_request" {
		t.Fatalf("Holding = %+v, want the in-flight request", held)
	}
	close(rt.gate)
	if err := <-prompted; err != nil {
		t.Fatal(err)
	}
	w.WaitClosed()
	s.WaitDone(t)
	// The park waited for the response, which follows the echo's events.
	hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, "agent_start", "message", "agent_settled", "response:prompt", "session_closed"),
		[]string{"host_superseded", "agent_start", "message", "agent_settled", "response:prompt", "session_closed:handoff_parked"})
}

func TestDrainParksUnattachedSessions(t *testing.T) {
	t.Parallel()
	s, w, _ := serveAndOpen(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	if err := w.Client().Close(); err != nil {
		t.Fatal(err)
	}
	if held := s.Host.Holding(); len(held) != 1 {
		t.Fatalf("a client leaving closed its session: %+v", held)
	}
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	s.WaitDone(t)
	if _, err := os.Stat(s.File("a.jsonl")); err != nil {
		t.Fatal(err)
	}
}

func TestDrainEmptyHostFinishesAtOnce(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	s.WaitDone(t)
}

// Runtimes without the optional capabilities still park and exit: with no
// snapshot every session counts as idle (even mid-turn); with a snapshot
// but no settle subscription the sweep parks once the turn ends.
func TestDrainWithoutRuntimeHooks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		opts   hosttest.ScriptedOptions
		prompt string
		abort  bool // end the turn once the drain is under way
		want   []string
	}{
		{"no hooks: parked even mid-turn", hosttest.ScriptedOptions{NoActivity: true, NoSettle: true}, "sleep 600000", false,
			[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked"}},
		{"activity only: the sweep parks after the turn", hosttest.ScriptedOptions{NoSettle: true}, "sleep 600000", true,
			[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked"}},
		{"settle only: idle at once", hosttest.ScriptedOptions{NoActivity: true}, "hello", false,
			[]string{"host_superseded", "session_closed:handoff_parked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, w, id := serveAndOpen(t, hosttest.NewScripted(tt.opts), host.Options{})
			idle := w.Open(s.File("idle.jsonl"))
			w.Prompt(id, tt.prompt)
			w.WaitFor("agent_start", hosttest.IsEvent("agent_start", id))
			if tt.prompt == "hello" {
				w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))
			}
			if err := s.Host.Drain(""); err != nil {
				t.Fatal(err)
			}
			if tt.abort {
				w.WaitFor("idle parked", hosttest.IsEvent("session_closed", idle))
				if held := s.Host.Holding(); len(held) != 1 || !slices.Contains(held[0].Why, "turn") {
					t.Fatalf("holding %+v, want the running turn", held)
				}
				w.Abort(id)
			}
			w.WaitClosed()
			s.WaitDone(t)
			hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), id, "agent_settled", "session_closed"), tt.want)
			hosttest.CheckOrder(t, hosttest.WireOrder(w.Records(), idle, "session_closed"), []string{"host_superseded", "session_closed:handoff_parked"})
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
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.WithClock(host.Options{IdleEvict: time.Minute}, fake))
	leaving := hosttest.Dial(t, s.Socket)
	plain := leaving.Open(s.File("plain.jsonl"))
	woken := leaving.Open(s.File("woken.jsonl"))
	leaving.Prompt(woken, "wake")
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
