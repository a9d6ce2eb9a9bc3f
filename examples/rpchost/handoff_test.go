package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/batonhq/baton/engine/host"
	"github.com/batonhq/baton/engine/host/hosttest"
)

// These tests run real rpchost processes on real unix sockets, one per
// case the generation-handoff protocol of package engine/host promises. Each asserts, per connection, the
// wire order host_superseded, then the session's turn events, then
// session_closed, then the close, and that the old process exits 0 while
// the test's client never disconnected.

func TestServingLineAndProtocolInfo(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(hosttest.TempDir(t), "h.sock")
	a := startServe(t, sock)
	if a.serving.Generation != 1 {
		t.Errorf("first host generation = %d", a.serving.Generation)
	}
	var info host.ProtocolInfo
	if err := hosttest.Dial(t, sock).MustCall(host.Command{Type: host.CmdGetProtocolInfo}).DecodeData(&info); err != nil {
		t.Fatal(err)
	}
	if info.InstanceID != a.serving.InstanceID || info.PID != a.serving.PID || info.Generation != 1 ||
		len(info.Capabilities) != 2 || info.Capabilities[0] != host.CapMultiSession || info.Capabilities[1] != host.CapGenerationHandoff {
		t.Errorf("get_protocol_info = %+v, serving %+v", info, a.serving)
	}
	a.signal(syscall.SIGTERM)
	if code := a.waitExit(); code != 0 {
		t.Errorf("exit after SIGTERM = %d", code)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a host shut down (not superseded) left its socket: %v", err)
	}
}

// an idle attached session: announce, then park, then close, then
// the old process exits while the client never disconnects; and a real
// successor reopens the parked file immediately.
func TestIdleAttachedSessionHandsOff(t *testing.T) {
	t.Parallel()
	dir, sock, a, w := serveAndDial(t)
	file := filepath.Join(dir, "a.jsonl")
	id := w.Open(file)
	w.Prompt(id, "hello")
	w.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, id))

	b := startServe(t, sock) // takes over and signals a
	if b.serving.Generation != 2 {
		t.Errorf("successor generation = %d, want 2", b.serving.Generation)
	}
	sup := w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
	if sup.InstanceID != a.serving.InstanceID || sup.Generation != 1 || sup.Successor == nil || sup.Successor.Socket != sock {
		t.Errorf("host_superseded = %s", sup.Raw)
	}
	parked := w.WaitFor("session_closed", hosttest.IsEvent(host.EventSessionClosed, id))
	if parked.Reason != host.ReasonHandoffParked || parked.SessionPath != file {
		t.Errorf("session_closed = %s", parked.Raw)
	}
	// The successor opens the released file at once: no retry needed.
	n := hosttest.Dial(t, sock)
	var info host.ProtocolInfo
	if err := n.MustCall(host.Command{Type: host.CmdGetProtocolInfo}).DecodeData(&info); err != nil || info.InstanceID != b.serving.InstanceID {
		t.Fatalf("public socket answered as %+v, %v; want the successor", info, err)
	}
	nid := n.Open(file)
	if st := n.State(nid).State.(map[string]any); st["turns"] != float64(1) {
		t.Errorf("successor sees %v, want the earlier turn", st)
	}
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("old generation exit = %d; stderr:\n%s", code, a.stderr)
	}
	hosttest.CheckOrder(t, w.Order(id, host.EventAgentSettled, host.EventSessionClosed, host.TypeResponse),
		[]string{host.EventHostSuperseded, "session_closed:handoff_parked", hosttest.Closed})
	if b.hasExited() {
		t.Fatal("the successor exited")
	}
}

// a mid-turn attached session is parked only after its turn
// settles, even past the grace; a get_state on the old connection during
// the turn is served. The turn is long and ends by abort once everything
// was checked, so a slow machine cannot end it early.
func TestMidTurnSessionParksAfterSettlePastGrace(t *testing.T) {
	t.Parallel()
	dir, sock, a, w := serveAndDial(t, "-grace", "50ms")
	file := filepath.Join(dir, "a.jsonl")
	id := w.Open(file)
	w.Prompt(id, "sleep 600000")
	w.WaitFor("agent_start", hosttest.IsEvent(host.EventAgentStart, id))

	b := startServe(t, sock)
	w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
	if st := w.State(id); !st.Busy || !st.Activity.Turn || !st.Draining {
		t.Errorf("get_state during the turn = %+v", st)
	}
	if _, err := w.Call(host.Command{Type: host.CmdOpenSession, SessionPath: filepath.Join(dir, "b.jsonl")}); !errors.Is(err, host.ErrDraining) {
		t.Errorf("open_session on the draining host = %v, want host_draining", err)
	}
	// The successor refuses the still reserved file, naming its owner.
	_, err := hosttest.Dial(t, sock).Call(host.Command{Type: host.CmdOpenSession, SessionPath: file})
	var re *host.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("open on the successor mid-turn = %v, want session_path_in_use", err)
	}
	if p, ok := re.PathInUse(); !ok || p.Owner.PID != a.serving.PID || p.Owner.InstanceID != a.serving.InstanceID || p.RetryAfterMS != 2000 {
		t.Errorf("session_path_in_use data = %s", re.Data)
	}
	// The grace expires into one report naming the session and its turn.
	hosttest.PollUntil(t, "grace report", func() bool { return len(a.logs("handoff grace expired; generation still held")) > 0 })
	report := a.logs("handoff grace expired; generation still held")[0]
	held := report["holding"].([]any)
	if len(held) != 1 || held[0].(map[string]any)["sessionId"] != id || held[0].(map[string]any)["why"].([]any)[0] != "turn" {
		t.Errorf("grace report = %v", report)
	}
	if w.IsClosed() || a.hasExited() {
		t.Fatal("the grace cut the turn short")
	}
	if st := w.State(id); !st.Busy {
		t.Fatalf("after the grace = %+v, want the turn still running", st)
	}
	w.MustCall(host.Command{Type: host.CmdAbort, SessionID: id}) // the turn settles
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("old generation exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, host.EventAgentSettled, host.EventSessionClosed),
		[]string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked", hosttest.Closed})
	hosttest.Dial(t, b.serving.Socket).Open(file) // free now
}

// a session holding only a durable wake source is parked without
// waiting for it (the default grace is ten minutes; the wake source never
// ends).
func TestWakeSourceDoesNotHoldTheHandoff(t *testing.T) {
	t.Parallel()
	dir, sock, a, w := serveAndDial(t)
	id := w.Open(filepath.Join(dir, "a.jsonl"))
	w.Prompt(id, "wake")
	w.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, id))
	if st := w.State(id); st.Busy || st.Activity.WakeSources != 1 {
		t.Fatalf("state = %+v, want idle holding one wake source", st)
	}
	startServe(t, sock)
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, host.EventSessionClosed), []string{host.EventHostSuperseded, "session_closed:handoff_parked", hosttest.Closed})
}

// a second drain request announces nothing twice (here: the
// successor's signal, the poll seeing the replaced entry, and one more
// signal).
func TestSecondDrainRequestAnnouncesOnce(t *testing.T) {
	t.Parallel()
	dir, sock, a, w := serveAndDial(t, "-poll", "20ms")
	id := w.Open(filepath.Join(dir, "a.jsonl"))
	w.Prompt(id, "sleep 600000") // holds the drain open until aborted
	startServe(t, sock)
	w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
	// Both the successor's signal and the poll have been handled; only
	// then a third request, so the kernel cannot merge two pending
	// SIGUSR1 into one.
	hosttest.PollUntil(t, "signal and poll handled", func() bool {
		return len(a.logs("successor signalled; superseded")) == 1 && len(a.logs("public socket replaced; superseded")) == 1
	})
	a.signal(syscall.SIGUSR1)
	hosttest.PollUntil(t, "third request", func() bool {
		return len(a.logs("successor signalled; superseded")) == 2 && len(a.logs("drain requested again; already draining")) >= 2
	})
	if again := len(a.logs("drain requested again; already draining")); again != 2 {
		t.Errorf("%d repeated requests logged, want 2", again)
	}
	w.MustCall(host.Command{Type: host.CmdAbort, SessionID: id})
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, host.EventAgentSettled, host.EventSessionClosed, host.EventHostSuperseded),
		[]string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked", hosttest.Closed})
}

// a socket replaced without any signal is noticed and announced
// with the successor; an entry that disappears counts only after three
// polls, and is announced with no successor.
func TestReplacedSocketNoticedWithoutSignal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		replace   func(t *testing.T, sock string)
		successor bool
	}{
		{"replaced", func(t *testing.T, sock string) {
			side := filepath.Join(filepath.Dir(sock), "other.sock")
			ln, err := listenUnix(side)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = ln.Close() })
			if err := os.Rename(side, sock); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"removed", func(t *testing.T, sock string) {
			if err := os.Remove(sock); err != nil {
				t.Fatal(err)
			}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, sock, a, w := serveAndDial(t, "-poll", "20ms")
			id := w.Open(filepath.Join(dir, "a.jsonl"))
			tc.replace(t, sock)
			sup := w.WaitFor("host_superseded", hosttest.IsType(host.EventHostSuperseded))
			if got := sup.Successor != nil && sup.Successor.Socket == sock; got != tc.successor {
				t.Errorf("host_superseded = %s", sup.Raw)
			}
			w.WaitClosed()
			if code := a.waitExit(); code != 0 {
				t.Fatalf("exit = %d", code)
			}
			hosttest.CheckOrder(t, w.Order(id, host.EventSessionClosed), []string{host.EventHostSuperseded, "session_closed:handoff_parked", hosttest.Closed})
			if len(a.logs("successor signalled; superseded")) != 0 {
				t.Error("a signal was sent")
			}
		})
	}
}

// a shared connection stays open while its other session is
// mid-turn.
func TestSharedConnectionStaysOpenWhileOtherSessionBusy(t *testing.T) {
	t.Parallel()
	dir, sock, a, w := serveAndDial(t)
	busy := w.Open(filepath.Join(dir, "busy.jsonl"))
	idle := w.Open(filepath.Join(dir, "idle.jsonl"))
	w.Prompt(busy, "sleep 600000")
	startServe(t, sock)
	w.WaitFor("idle session parked", hosttest.IsEvent(host.EventSessionClosed, idle))
	if st := w.State(busy); !st.Busy {
		t.Errorf("busy session = %+v", st)
	}
	if _, err := w.Call(host.Command{Type: host.CmdGetState, SessionID: idle}); !errors.Is(err, host.ErrSessionClosed) {
		t.Errorf("get_state of the parked handle = %v, want session_closed", err)
	}
	if w.IsClosed() {
		t.Fatal("closed while a session on it is busy")
	}
	w.MustCall(host.Command{Type: host.CmdAbort, SessionID: busy})
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(idle, host.EventSessionClosed), []string{host.EventHostSuperseded, "session_closed:handoff_parked", hosttest.Closed})
	hosttest.CheckOrder(t, w.Order(busy, host.EventAgentSettled, host.EventSessionClosed, "response:get_state"),
		[]string{host.EventHostSuperseded, "response:get_state", "response:get_state:session_closed", host.EventAgentSettled, "session_closed:handoff_parked", hosttest.Closed})
}

// no park while a host request for that session is in flight.
// "hold 2000" keeps the prompt command itself in flight with no turn
// running; the drain signal comes while it is.
func TestNoParkWhileHostRequestInFlight(t *testing.T) {
	t.Parallel()
	dir, sock, a, w := serveAndDial(t)
	file := filepath.Join(dir, "a.jsonl")
	id := w.Open(file)
	watcher := hosttest.Dial(t, sock)
	wid := watcher.Open(file) // attaches to the same session
	if _, err := w.Client().Send(host.Command{ID: "held", Type: host.CmdPrompt, SessionID: id, Text: "hold 2000"}); err != nil {
		t.Fatal(err)
	}
	hosttest.PollUntil(t, "prompt in flight", func() bool { return watcher.State(wid).HostRequests == 1 })
	a.signal(syscall.SIGUSR1)
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, host.EventAgentSettled, "response:prompt", host.EventSessionClosed),
		[]string{host.EventHostSuperseded, host.EventAgentSettled, "response:prompt", "session_closed:handoff_parked", hosttest.Closed})
}

// Runtimes without the optional capabilities still park and exit: with no
// activity snapshot a session counts as idle (even mid-turn, which is the
// documented price); with a snapshot and no settle subscription the
// sweep parks once the turn ends.
func TestRuntimeWithoutHooksParksAndExits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		hooks, prompt string
		abort         bool // end the turn once the idle session is parked
		want          []string
	}{
		{"none", "sleep 600000", false, []string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked", hosttest.Closed}},
		{"activity", "sleep 600000", true, []string{host.EventHostSuperseded, host.EventAgentSettled, "session_closed:handoff_parked", hosttest.Closed}},
		{"settle", "hello", false, []string{host.EventHostSuperseded, "session_closed:handoff_parked", hosttest.Closed}},
	} {
		t.Run(tc.hooks, func(t *testing.T) {
			t.Parallel()
			dir, _, a, w := serveAndDial(t, "-hooks", tc.hooks)
			id := w.Open(filepath.Join(dir, "a.jsonl"))
			idle := w.Open(filepath.Join(dir, "idle.jsonl"))
			w.Prompt(id, tc.prompt)
			w.WaitFor("agent_start", hosttest.IsEvent(host.EventAgentStart, id))
			if tc.prompt == "hello" {
				w.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, id))
			}
			a.signal(syscall.SIGUSR1)
			if tc.abort {
				w.WaitFor("idle parked", hosttest.IsEvent(host.EventSessionClosed, idle))
				if st := w.State(id); !st.Busy {
					t.Fatalf("state = %+v, want the turn running", st)
				}
				w.MustCall(host.Command{Type: host.CmdAbort, SessionID: id})
			}
			w.WaitClosed()
			if code := a.waitExit(); code != 0 {
				t.Fatalf("exit = %d", code)
			}
			hosttest.CheckOrder(t, w.Order(id, host.EventAgentSettled, host.EventSessionClosed), tc.want)
			hosttest.CheckOrder(t, w.Order(idle, host.EventSessionClosed), []string{host.EventHostSuperseded, "session_closed:handoff_parked", hosttest.Closed})
		})
	}
}

// Cross-generation claims stand only while their owner lives: a second
// host sharing the claim directory is refused with the owner; once the
// owner is killed (no drain, no cleanup) the path opens at once.
func TestClaimStandsOnlyWhileOwnerAlive(t *testing.T) {
	t.Parallel()
	dir := hosttest.TempDir(t)
	claims, file := filepath.Join(dir, "claims"), filepath.Join(dir, "a.jsonl")
	a := startServe(t, filepath.Join(dir, "a.sock"), "-claims", claims)
	c := startServe(t, filepath.Join(dir, "c.sock"), "-claims", claims)
	hosttest.Dial(t, a.serving.Socket).Open(file)
	other := hosttest.Dial(t, c.serving.Socket)
	_, err := other.Call(host.Command{Type: host.CmdOpenSession, SessionPath: file})
	var re *host.RemoteError
	if !errors.As(err, &re) {
		t.Fatalf("open held path = %v", err)
	}
	if p, ok := re.PathInUse(); !ok || p.Owner.PID != a.serving.PID || p.RetryAfterMS != 2000 {
		t.Errorf("errorData = %s", re.Data)
	}
	a.signal(syscall.SIGKILL)
	a.waitExit()
	other.Open(file)
}
