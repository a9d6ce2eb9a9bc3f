package hosttest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

func TestLabel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rec  host.Record
		want string
	}{
		{"event", host.Record{Type: "agent_start", SessionID: "s1"}, "agent_start"},
		{"session_closed names its reason", host.Record{Type: "session_closed", Reason: "idle_evicted"}, "session_closed:idle_evicted"},
		{"successful response", host.Record{Type: "response", Command: "prompt", Success: true}, "response:prompt"},
		{"failed response names its code", host.Record{Type: "response", Command: "open_session", Error: "host_draining"}, "response:open_session:host_draining"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hosttest.Labels([]host.Record{tt.rec}); len(got) != 1 || got[0] != tt.want {
				t.Errorf("Labels = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestWireOrder(t *testing.T) {
	t.Parallel()
	sup := host.Record{Type: "host_superseded"}
	settled := host.Record{Type: "agent_settled", SessionID: "s1"}
	other := host.Record{Type: "agent_settled", SessionID: "s2"}
	parked := host.Record{Type: "session_closed", SessionID: "s1", Reason: "handoff_parked"}
	resp := host.Record{Type: "response", Command: "get_state", Success: true}
	tests := []struct {
		name string
		recs []host.Record
		keep []string
		want []string
	}{
		{"nothing before the announcement", []host.Record{settled, resp}, []string{"agent_settled", "response"}, nil},
		{"the session's events and every response", []host.Record{settled, sup, other, settled, resp, parked},
			[]string{"agent_settled", "session_closed", "response"},
			[]string{"host_superseded", "agent_settled", "response:get_state", "session_closed:handoff_parked"}},
		{"only what keep names", []host.Record{sup, settled, resp, parked}, []string{"session_closed:handoff"},
			[]string{"host_superseded", "session_closed:handoff_parked"}},
		{"every announcement", []host.Record{sup, sup}, nil, []string{"host_superseded", "host_superseded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, hosttest.WireOrder(tt.recs, "s1", tt.keep...)); d != "" {
				t.Errorf("WireOrder (-want +got):\n%s", d)
			}
		})
	}
}

// A Conn records a whole handoff from the client's side, and Order ends
// with the close.
func TestConnRecordsAHandoff(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	w := hosttest.Dial(t, s.Socket)
	id := w.Open(s.File("a.jsonl"))
	w.Prompt(id, "hello")
	if m := w.WaitFor("echo", hosttest.IsType("message")); m.Text != "hello" || m.SessionID != id {
		t.Errorf("message = %s", m.Raw)
	}
	w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))
	if st := w.State(id); st.Busy || st.SessionID != id {
		t.Errorf("state = %+v", st)
	}
	if w.IsClosed() {
		t.Fatal("closed before the drain")
	}
	if err := s.Host.Drain(""); err != nil {
		t.Fatal(err)
	}
	w.WaitClosed()
	s.WaitDone(t)
	if err := s.ServeErr(t); err != nil {
		t.Errorf("ServeErr = %v", err)
	}
	hosttest.CheckOrder(t, w.Order(id, "session_closed"), []string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed})
	if n := w.Count(hosttest.IsType("response")); n != 3 {
		t.Errorf("%d responses, want 3", n)
	}
}

// fatal runs f on a goroutine of its own with a testing.TB whose Fatal
// and Fatalf end f and record the message instead of failing t.
func fatal(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(rec)
	}()
	<-done
	return rec.msg
}

type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Fatal(args ...any) {
	r.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// The helpers fail the test, saying why, rather than hang or go on.
func TestHelpersFailTheTest(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	tests := []struct {
		name string
		f    func(tb testing.TB)
		want string
	}{
		{"a command that must succeed fails", func(tb testing.TB) {
			hosttest.Dial(tb, s.Socket).Prompt("ses_nope", "x")
		}, "prompt: host: unknown session: prompt failed: unknown_session"},
		{"an order differs", func(tb testing.TB) {
			hosttest.CheckOrder(tb, []string{"a", "b"}, []string{"a"})
		}, "wire order (-want +got)"},
		{"the host closes the connection first", func(tb testing.TB) {
			w := hosttest.Dial(tb, s.Socket)
			w.Info()
			if err := s.Host.Drain(""); err != nil {
				t.Error(err)
			}
			w.WaitFor("nothing", hosttest.IsType("nothing"))
		}, "connection closed before nothing; got [response:get_protocol_info host_superseded]"},
	}
	for _, tt := range tests { // in order: the last one drains the host
		if got := fatal(t, tt.f); !strings.Contains(got, tt.want) {
			t.Errorf("%s: failed with %q, want %q", tt.name, got, tt.want)
		}
	}
	s.WaitDone(t)
}

// When the host closes instead of draining, a storm's callers stop
// without error, and every session gets its terminal record.
func TestStormEndsWhenTheHostCloses(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{})
	storm := hosttest.StartStorm(t, s.Socket, s.Dir, hosttest.StormOptions{Conns: 2, Sessions: 3, Callers: 2, Calls: 1_000_000, Busy: "sleep 600000"})
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.DefaultTimeout)
	defer cancel()
	if err := s.Host.Close(ctx); err != nil {
		t.Fatal(err)
	}
	storm.WaitParked(t)
	if errs := storm.Wait(); len(errs) != 0 {
		t.Errorf("storm errors: %v", errs)
	}
	if len(storm.Targets()) != 2 {
		t.Fatalf("%d targets", len(storm.Targets()))
	}
	for _, tg := range storm.Targets() {
		tg.Conn.WaitClosed()
		if len(tg.Sessions) != 3 || tg.Busy != tg.Sessions[0] {
			t.Errorf("target = %+v", tg)
		}
		for _, id := range tg.Sessions {
			if n := tg.Conn.Count(hosttest.IsEvent("session_closed", id)); n != 1 {
				t.Errorf("%d session_closed for %s", n, id)
			}
		}
	}
}

func TestBuffer(t *testing.T) {
	t.Parallel()
	var b hosttest.Buffer
	if got := b.Lines(); len(got) != 1 || got[0] != "" {
		t.Errorf("Lines of nothing = %q", got)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { fmt.Fprintf(&b, "line %d\n", i) })
	}
	wg.Wait()
	got := b.Lines()
	if len(got) != 4 || b.Sync() != nil || !strings.HasPrefix(b.String(), "line ") {
		t.Errorf("Lines = %q", got)
	}
}
