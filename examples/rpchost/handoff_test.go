package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// These tests run real rpchost processes on real unix sockets, one per
// case the generation-handoff protocol of package host promises. Each asserts, per connection, the
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
	info := hosttest.Dial(t, sock).Info()
	if info.InstanceID != a.serving.InstanceID || info.PID != a.serving.PID || info.Generation != 1 ||
		len(info.Capabilities) != 2 || info.Capabilities[0] != "multi_session" || info.Capabilities[1] != "generation_handoff" {
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
	w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))

	b := startServe(t, sock) // takes over and signals a
	if b.serving.Generation != 2 {
		t.Errorf("successor generation = %d, want 2", b.serving.Generation)
	}
	sup := w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
	if sup.InstanceID != a.serving.InstanceID || sup.Generation != 1 || sup.Successor != sock {
		t.Errorf("host_superseded = %s", sup.Raw)
	}
	parked := w.WaitFor("session_closed", hosttest.IsEvent("session_closed", id))
	if parked.Reason != "handoff_parked" || parked.SessionPath != file {
		t.Errorf("session_closed = %s", parked.Raw)
	}
	// The successor opens the released file at once: no retry needed.
	n := hosttest.Dial(t, sock)
	if info := n.Info(); info.InstanceID != b.serving.InstanceID {
		t.Fatalf("public socket answered as %+v; want the successor", info)
	}
	nid := n.Open(file)
	if st := n.State(nid).State.(map[string]any); st["turns"] != float64(1) {
		t.Errorf("successor sees %v, want the earlier turn", st)
	}
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("old generation exit = %d; stderr:\n%s", code, a.stderr)
	}
	hosttest.CheckOrder(t, w.Order(id, "agent_settled", "session_closed", "response"),
		[]string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed})
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
	w.WaitFor("agent_start", hosttest.IsEvent("agent_start", id))

	b := startServe(t, sock)
	w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
	if st := w.State(id); !st.Busy || !st.Activity.Turn || !st.Draining {
		t.Errorf("get_state during the turn = %+v", st)
	}
	if _, err := w.Client().Open(hosttest.Context(t), filepath.Join(dir, "b.jsonl"), ""); !errors.Is(err, host.ErrDraining) {
		t.Errorf("open_session on the draining host = %v, want host_draining", err)
	}
	// The successor refuses the still reserved file, naming its owner.
	_, err := hosttest.Dial(t, sock).Client().Open(hosttest.Context(t), file, "")
	if p, ok := hosttest.PathInUse(err); !ok || p.PID != a.serving.PID || p.InstanceID != a.serving.InstanceID || p.RetryAfterMS != 2000 {
		t.Errorf("open on the successor mid-turn = %v, holder %+v; want session_path_in_use naming the predecessor", err, p)
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
	w.Abort(id) // the turn settles
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("old generation exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, "agent_settled", "session_closed"),
		[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked", hosttest.Closed})
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
	w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))
	if st := w.State(id); st.Busy || st.Activity.WakeSources != 1 {
		t.Fatalf("state = %+v, want idle holding one wake source", st)
	}
	startServe(t, sock)
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, "session_closed"), []string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed})
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
	w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
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
	w.Abort(id)
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, "agent_settled", "session_closed", "host_superseded"),
		[]string{"host_superseded", "agent_settled", "session_closed:handoff_parked", hosttest.Closed})
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
			sup := w.WaitFor("host_superseded", hosttest.IsType("host_superseded"))
			if got := sup.Successor == sock; got != tc.successor {
				t.Errorf("host_superseded = %s", sup.Raw)
			}
			w.WaitClosed()
			if code := a.waitExit(); code != 0 {
				t.Fatalf("exit = %d", code)
			}
			hosttest.CheckOrder(t, w.Order(id, "session_closed"), []string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed})
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
	w.WaitFor("idle session parked", hosttest.IsEvent("session_closed", idle))
	if st := w.State(busy); !st.Busy {
		t.Errorf("busy session = %+v", st)
	}
	if _, err := w.Client().State(hosttest.Context(t), idle); !errors.Is(err, host.ErrSessionClosed) {
		t.Errorf("get_state of the parked handle = %v, want session_closed", err)
	}
	if w.IsClosed() {
		t.Fatal("closed while a session on it is busy")
	}
	w.Abort(busy)
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(idle, "session_closed"), []string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed})
	hosttest.CheckOrder(t, w.Order(busy, "agent_settled", "session_closed", "response:get_state"),
		[]string{"host_superseded", "response:get_state", "response:get_state:session_closed", "agent_settled", "session_closed:handoff_parked", hosttest.Closed})
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
	prompted := make(chan error, 1)
	go func() { prompted <- w.Client().Prompt(hosttest.Context(t), id, "hold 2000") }()
	hosttest.PollUntil(t, "prompt in flight", func() bool { return watcher.State(wid).HostRequests == 1 })
	a.signal(syscall.SIGUSR1)
	if err := <-prompted; err != nil {
		t.Fatal(err)
	}
	w.WaitClosed()
	if code := a.waitExit(); code != 0 {
		t.Fatalf("exit = %d", code)
	}
	hosttest.CheckOrder(t, w.Order(id, "agent_settled", "response:prompt", "session_closed"),
		[]string{"host_superseded", "agent_settled", "response:prompt", "session_closed:handoff_parked", hosttest.Closed})
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
		{"none", "sleep 600000", false, []string{"host_superseded", "agent_settled", "session_closed:handoff_parked", hosttest.Closed}},
		{"activity", "sleep 600000", true, []string{"host_superseded", "agent_settled", "session_closed:handoff_parked", hosttest.Closed}},
		{"settle", "hello", false, []string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed}},
	} {
		t.Run(tc.hooks, func(t *testing.T) {
			t.Parallel()
			dir, _, a, w := serveAndDial(t, "-hooks", tc.hooks)
			id := w.Open(filepath.Join(dir, "a.jsonl"))
			idle := w.Open(filepath.Join(dir, "idle.jsonl"))
			w.Prompt(id, tc.prompt)
			w.WaitFor("agent_start", hosttest.IsEvent("agent_start", id))
			if tc.prompt == "hello" {
				w.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", id))
			}
			a.signal(syscall.SIGUSR1)
			if tc.abort {
				w.WaitFor("idle parked", hosttest.IsEvent("session_closed", idle))
				if st := w.State(id); !st.Busy {
					t.Fatalf("state = %+v, want the turn running", st)
				}
				w.Abort(id)
			}
			w.WaitClosed()
			if code := a.waitExit(); code != 0 {
				t.Fatalf("exit = %d", code)
			}
			hosttest.CheckOrder(t, w.Order(id, "agent_settled", "session_closed"), tc.want)
			hosttest.CheckOrder(t, w.Order(idle, "session_closed"), []string{"host_superseded", "session_closed:handoff_parked", hosttest.Closed})
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
	_, err := other.Client().Open(hosttest.Context(t), file, "")
	if p, ok := hosttest.PathInUse(err); !ok || p.PID != a.serving.PID || p.RetryAfterMS != 2000 {
		t.Errorf("open held path = %v, holder %+v", err, p)
	}
	a.signal(syscall.SIGKILL)
	a.waitExit()
	other.Open(file)
}
