package multiproc

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/batonhq/baton/store"
)

// leaseTTL is the nodes' lease TTL: short, so that a lease lapses within
// the test.
const leaseTTL = 2 * time.Second

func TestMain(m *testing.M) {
	if os.Getenv(envNode) == "1" {
		os.Exit(runNode())
	}
	os.Exit(m.Run())
}

// database returns the server's URL and a fresh schema, dropped at
// cleanup (after the nodes started later have ended).
func database(t *testing.T) (url, schema string) {
	t.Helper()
	url = os.Getenv("BATON_PG_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("BATON_PG_URL is not set, and CI=true requires a PostgreSQL server (.ci/postgres.sh starts one)")
		}
		t.Skip("BATON_PG_URL is not set: skipping the multi-process tests (run them with: .ci/postgres.sh go test ./store/pgstore/multiproc)")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema = "mp_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE"); err != nil {
			t.Error(err)
		}
	})
	return url, schema
}

// node is one node process.
type node struct {
	t       *testing.T
	id      string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	replies chan reply
	logPath string
	stderr  *strings.Builder
	done    chan struct{}
	mu      sync.Mutex // serializes calls
}

// startNode runs the test binary as node id on the schema and waits until
// it has reconciled. It is ended at cleanup (stdin closed, then killed).
func startNode(t *testing.T, url, schema, id string, env ...string) *node {
	t.Helper()
	n := &node{t: t, id: id, replies: make(chan reply, 16), logPath: filepath.Join(t.TempDir(), id+".log"), stderr: &strings.Builder{}, done: make(chan struct{})}
	n.cmd = exec.Command(os.Args[0], "-test.run=^$")
	n.cmd.Env = append(os.Environ(), envNode+"=1", envURL+"="+url, envSchema+"="+schema, envID+"="+id, envLog+"="+n.logPath, envTTL+"="+leaseTTL.String())
	n.cmd.Env = append(n.cmd.Env, env...)
	var err error
	if n.stdin, err = n.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := n.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errMu sync.Mutex
	n.cmd.Stderr = writerFunc(func(p []byte) (int, error) { errMu.Lock(); defer errMu.Unlock(); return n.stderr.Write(p) })
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(n.replies)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r reply
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				r = reply{Err: "bad reply: " + sc.Text(), Kind: "other"}
			}
			n.replies <- r
		}
	}()
	go func() { _ = n.cmd.Wait(); close(n.done) }()
	t.Cleanup(func() {
		_ = n.cmd.Process.Signal(syscall.SIGCONT)
		_ = n.stdin.Close()
		select {
		case <-n.done:
		case <-time.After(30 * time.Second):
			_ = n.cmd.Process.Kill()
			<-n.done
		}
	})
	n.waitLog(func(e logEvent) bool { return e.Ev == "ready" }, "the node's start")
	return n
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// send writes a command without waiting for its answer.
func (n *node) send(c command) {
	n.t.Helper()
	b, _ := json.Marshal(c)
	if _, err := n.stdin.Write(append(b, '\n')); err != nil {
		n.t.Fatalf("node %s: %v", n.id, err)
	}
}

// recv reads the answer to the oldest command sent.
func (n *node) recv() reply {
	n.t.Helper()
	select {
	case r, ok := <-n.replies:
		if !ok {
			n.t.Fatalf("node %s exited: %s", n.id, n.stderr.String())
		}
		return r
	case <-time.After(45 * time.Second):
		n.t.Fatalf("node %s did not answer", n.id)
	}
	return reply{}
}

// call sends a command and returns its answer.
func (n *node) call(c command) reply {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.send(c)
	return n.recv()
}

// must calls and fails the test on an error answer.
func (n *node) must(c command) reply {
	n.t.Helper()
	r := n.call(c)
	if !r.OK {
		n.t.Fatalf("node %s: %+v: %s (%s)", n.id, c, r.Err, r.Kind)
	}
	return r
}

// events reads the node's log: its own events, and the rest as raw lines.
func (n *node) events() ([]logEvent, string) {
	n.t.Helper()
	b, err := os.ReadFile(n.logPath)
	if err != nil && !os.IsNotExist(err) {
		n.t.Fatal(err)
	}
	var evs []logEvent
	for _, line := range strings.Split(string(b), "\n") {
		var e logEvent
		if json.Unmarshal([]byte(line), &e) == nil && e.Ev != "" {
			evs = append(evs, e)
		}
	}
	return evs, string(b)
}

// count counts the node's events of kind ev in workspace ws.
func (n *node) count(ev, ws string) int {
	evs, _ := n.events()
	c := 0
	for _, e := range evs {
		if e.Ev == ev && e.WS == ws {
			c++
		}
	}
	return c
}

// waitLog polls the node's log (bounded) until an event matches.
func (n *node) waitLog(match func(logEvent) bool, what string) {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		evs, raw := n.events()
		for _, e := range evs {
			if match(e) {
				return
			}
		}
		select {
		case <-n.done:
			n.t.Fatalf("node %s exited waiting for %s:\n%s\n%s", n.id, what, n.stderr.String(), raw)
		default:
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("node %s: no %s in its log:\n%s", n.id, what, raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRaw polls the node's log (bounded) until it holds text.
func (n *node) waitRaw(text, what string) {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, raw := n.events()
		if strings.Contains(raw, text) {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("node %s: no %s in its log:\n%s", n.id, what, raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitState polls (bounded) through n until the handoff is in one of
// states.
func (n *node) waitState(ws, id string, states ...string) reply {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := n.must(command{Op: "get", WS: ws, Handoff: id})
		for _, s := range states {
			if r.State == s {
				return r
			}
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("handoff %s is %s, want one of %v", id, r.State, states)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCreateRace: two nodes create a transfer in the same workspace at the
// same moment; exactly one transfer exists and is launched once. With
// distinct request ids the loser gets ErrTransferPending; with the same
// request id both get the one handoff (the loser's is the replay).
//
// The target confirms readiness only when the test tells it to
// (modelConfirm), after both answers were read: the winner's transfer is
// still pending whenever the loser's Create runs, whichever node is
// faster. (With a target ready at once, the winner's transfer could
// complete before the loser's Create arrived; that Create then rightly
// starts a second transfer, or finds its source session changed, and no
// race was tested.)
func TestCreateRace(t *testing.T) {
	t.Parallel()
	url, schema := database(t)
	a, b := startNode(t, url, schema, "node-a"), startNode(t, url, schema, "node-b")
	const rounds = 8
	for i := range rounds {
		for _, same := range []bool{false, true} {
			ws := fmt.Sprintf("race-%d-%t", i, same)
			a.must(command{Op: "workspace", WS: ws})
			ca, cb := command{Op: "create", WS: ws, Req: "req-a", Model: modelConfirm}, command{Op: "create", WS: ws, Req: "req-b", Model: modelConfirm}
			if same {
				cb.Req = ca.Req
			}
			// Both commands are written before either answer is read.
			a.mu.Lock()
			b.mu.Lock()
			a.send(ca)
			b.send(cb)
			ra, rb := a.recv(), b.recv()
			b.mu.Unlock()
			a.mu.Unlock()

			var won []reply
			for _, r := range []reply{ra, rb} {
				if r.OK {
					won = append(won, r)
				}
			}
			switch {
			case same:
				if len(won) != 2 || won[0].Handoff != won[1].Handoff {
					t.Fatalf("%s: same request id: A %+v, B %+v; want both to get the one handoff", ws, ra, rb)
				}
			default:
				if len(won) != 1 {
					t.Fatalf("%s: A %+v, B %+v; want exactly one winner", ws, ra, rb)
				}
				loser := ra
				if ra.OK {
					loser = rb
				}
				if loser.Kind != "pending" {
					t.Fatalf("%s: the loser got %+v, want ErrTransferPending", ws, loser)
				}
			}
			for _, r := range won {
				if !store.HandoffState(r.State).Pending() {
					t.Fatalf("%s: create answered %+v, want a pending transfer", ws, r)
				}
			}
			// The one target is running and waits for its confirmation:
			// the transfer is still pending. Confirm it, and the transfer
			// completes.
			waitLogAny(t, []*node{a, b}, func(e logEvent) bool { return e.Ev == "held" && e.WS == ws }, "the held target of "+ws)
			if r := a.must(command{Op: "get", WS: ws, Handoff: won[0].Handoff}); !store.HandoffState(r.State).Pending() {
				t.Fatalf("%s: before the confirmation the transfer is %+v, want pending", ws, r)
			}
			if got := a.must(command{Op: "confirm", WS: ws}).Confirmed + b.must(command{Op: "confirm", WS: ws}).Confirmed; got != 1 {
				t.Fatalf("%s: %d targets confirmed, want 1", ws, got)
			}
			a.waitState(ws, won[0].Handoff, "completed")
			if got := a.count("launch", ws) + b.count("launch", ws); got != 1 {
				t.Fatalf("%s: %d launches, want 1", ws, got)
			}
		}
	}
}

// waitLogAny polls the nodes' logs (bounded) until an event of one of them
// matches.
func waitLogAny(t *testing.T, nodes []*node, match func(logEvent) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var raws []string
		for _, n := range nodes {
			evs, raw := n.events()
			for _, e := range evs {
				if match(e) {
					return
				}
			}
			raws = append(raws, n.id+":\n"+raw)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the nodes' logs:\n%s", what, strings.Join(raws, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestKilledDriver: the node driving a transfer is killed (SIGKILL); once
// its lease lapses the other node's periodic Reconcile marks the transfer
// interrupted, and nothing is launched again.
func TestKilledDriver(t *testing.T) {
	t.Parallel()
	url, schema := database(t)
	a, b := startNode(t, url, schema, "node-a"), startNode(t, url, schema, "node-b")
	const ws = "killed"
	a.must(command{Op: "workspace", WS: ws})
	h := a.must(command{Op: "create", WS: ws, Req: "r1", Model: modelHold})
	a.waitLog(func(e logEvent) bool { return e.Ev == "launch" && e.WS == ws }, "launch")
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	got := b.waitState(ws, h.Handoff, "interrupted")
	if got.Attempt != 1 {
		t.Errorf("attempt = %d, want 1", got.Attempt)
	}
	// One more reconcile round: still nothing launched anywhere.
	b.must(command{Op: "reconcile"})
	if diff := cmp.Diff([2]int{1, 0}, [2]int{a.count("launch", ws), b.count("launch", ws)}); diff != "" {
		t.Errorf("launches [A B] (-want +got):\n%s", diff)
	}
}

// TestFencedHolder: a node is frozen (SIGSTOP) after taking the
// reservation and before launching its target. Its lease lapses, the other
// node interrupts the transfer and, on a retry, launches the target of a
// new attempt. When the frozen node wakes, its launch is refused: its
// epoch is stale.
func TestFencedHolder(t *testing.T) {
	t.Parallel()
	url, schema := database(t)
	a, b := startNode(t, url, schema, "node-a"), startNode(t, url, schema, "node-b")
	const ws = "fenced"
	a.must(command{Op: "workspace", WS: ws})
	h := a.must(command{Op: "create", WS: ws, Req: "r1", Model: modelGate})
	// The briefing is built just before the launch; the node waits there
	// for "release", which is sent now and read only once it wakes.
	a.waitLog(func(e logEvent) bool { return e.Ev == "briefing" && e.WS == ws }, "briefing")
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b.waitState(ws, h.Handoff, "interrupted")
	r := b.must(command{Op: "decide", WS: ws, Handoff: h.Handoff, Action: "retry"})
	if r.Attempt != 2 {
		t.Fatalf("retry = %+v, want attempt 2", r)
	}
	// B builds its own briefing (gate: wait for its release too), then
	// launches attempt 2.
	b.waitLog(func(e logEvent) bool { return e.Ev == "briefing" && e.WS == ws && e.Attempt == 2 }, "briefing of attempt 2")
	b.must(command{Op: "release"})
	b.waitLog(func(e logEvent) bool { return e.Ev == "launch" && e.WS == ws && e.Attempt == 2 }, "launch of attempt 2")

	a.send(command{Op: "release"})
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r := a.recv(); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	// A's driver now tries to launch attempt 1: refused, its epoch is
	// stale. It launches nothing and leaves B's attempt alone.
	a.waitRaw(`"launch refused: another process took the reservation (stale epoch)"`, "the fenced launch")
	_, raw := a.events()
	if !strings.Contains(raw, `"handoff":"`+h.Handoff+`","attempt":1`) {
		t.Errorf("the refusal is not of attempt 1 of %s:\n%s", h.Handoff, raw)
	}
	if diff := cmp.Diff([2]int{0, 1}, [2]int{a.count("launch", ws), b.count("launch", ws)}); diff != "" {
		t.Errorf("launches [A B] (-want +got):\n%s\nA's log:\n%s", diff, raw)
	}
	got := a.must(command{Op: "get", WS: ws, Handoff: h.Handoff})
	if got.State != "starting" || got.Attempt != 2 {
		t.Errorf("after the refusal: %+v, want attempt 2 starting (driven by B)", got)
	}
}

// TestFrozenAtSpawn: a node is frozen (SIGSTOP) after the commit that
// fenced its target's launch in and recorded it, right before the process
// starts. Its lease lapses; the other node reconciles the transfer (it
// reaps the frozen node's launch, finding nothing, and takes the
// reservation) and, on a retry, launches the target of a new attempt. When
// the frozen node wakes, its admission is refused (stale epoch): its
// process never starts, and it leaves the other node's attempt alone.
func TestFrozenAtSpawn(t *testing.T) {
	t.Parallel()
	url, schema := database(t)
	a, b := startNode(t, url, schema, "node-a"), startNode(t, url, schema, "node-b")
	const ws = "frozen-at-spawn"
	a.must(command{Op: "workspace", WS: ws})
	h := a.must(command{Op: "create", WS: ws, Req: "r1", Model: modelSpawnGate})
	a.waitLog(func(e logEvent) bool { return e.Ev == "spawning" && e.WS == ws }, "the spawn of attempt 1")
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b.waitState(ws, h.Handoff, "interrupted")
	r := b.must(command{Op: "decide", WS: ws, Handoff: h.Handoff, Action: "retry"})
	if r.Attempt != 2 {
		t.Fatalf("retry = %+v, want attempt 2", r)
	}
	b.waitLog(func(e logEvent) bool { return e.Ev == "spawning" && e.WS == ws && e.Attempt == 2 }, "the spawn of attempt 2")
	b.must(command{Op: "release"})
	b.waitLog(func(e logEvent) bool { return e.Ev == "launch" && e.WS == ws && e.Attempt == 2 }, "launch of attempt 2")

	a.send(command{Op: "release"})
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r := a.recv(); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	a.waitLog(func(e logEvent) bool { return e.Ev == "refused" && e.WS == ws && e.Attempt == 1 }, "the refused admission of attempt 1")
	a.waitRaw(`"launch refused: another process took the reservation (stale epoch)"`, "the fenced launch")
	if diff := cmp.Diff([2]int{0, 1}, [2]int{a.count("launch", ws), b.count("launch", ws)}); diff != "" {
		_, raw := a.events()
		t.Errorf("launches [A B] (-want +got):\n%s\nA's log:\n%s", diff, raw)
	}
	got := a.must(command{Op: "get", WS: ws, Handoff: h.Handoff})
	if got.State != "starting" || got.Attempt != 2 {
		t.Errorf("after the refusal: %+v, want attempt 2 starting (driven by B)", got)
	}
}

// TestStopThroughOtherNode: a Stop sent to the node that does not drive
// the transfer is carried out and confirmed by the node that does: it
// stops its target; the other node starts and stops nothing.
func TestStopThroughOtherNode(t *testing.T) {
	t.Parallel()
	url, schema := database(t)
	a, b := startNode(t, url, schema, "node-a"), startNode(t, url, schema, "node-b")
	const ws = "stopped"
	a.must(command{Op: "workspace", WS: ws})
	h := a.must(command{Op: "create", WS: ws, Req: "r1", Model: modelHold})
	a.waitLog(func(e logEvent) bool { return e.Ev == "launch" && e.WS == ws }, "launch")
	r := b.must(command{Op: "stop", WS: ws})
	if r.Outcome != "stopped" {
		t.Fatalf("stop through B = %+v, want stopped", r)
	}
	got := b.must(command{Op: "get", WS: ws, Handoff: h.Handoff})
	if got.State != "cancelled" || got.StopUnconfirmed {
		t.Fatalf("after the stop: %+v, want cancelled, confirmed", got)
	}
	if diff := cmp.Diff([4]int{1, 1, 0, 0}, [4]int{a.count("launch", ws), a.count("stop", ws), b.count("launch", ws), b.count("stop", ws)}); diff != "" {
		_, raw := a.events()
		t.Errorf("[A launches, A stops, B launches, B stops] (-want +got):\n%s\nA's log:\n%s", diff, raw)
	}
}

// frozenIdle is the IdleInTransactionTimeout of TestFrozenNode's nodes:
// longer than a lease TTL, so that the frozen node's lease lapses while
// its transaction still holds its workspace's lock.
const frozenIdle = 5 * time.Second

// TestFrozenNode: a node is frozen (SIGSTOP) inside an Update, holding the
// lock of its workspace (the Update that records its target's launch,
// before the spawn). Transfers of other workspaces on the other node
// complete while the frozen transaction still holds that lock. Once the
// server has ended the frozen transaction (its IdleInTransactionTimeout)
// and the lease has lapsed, the other node fences the frozen workspace's
// transfer (interrupted, a new epoch). The frozen node, resumed, finds
// its connection gone: its Update fails, nothing it wrote is kept, and it
// launches nothing. (Without the server's limit, the fencing would wait
// for the frozen node for ever.)
func TestFrozenNode(t *testing.T) {
	t.Parallel()
	url, schema := database(t)
	idle := envIdle + "=" + frozenIdle.String()
	a, b := startNode(t, url, schema, "node-a", idle), startNode(t, url, schema, "node-b", idle)
	const ws = frozenPrefix
	a.must(command{Op: "workspace", WS: ws})
	h := a.must(command{Op: "create", WS: ws, Req: "r1", Model: modelHold})
	a.waitLog(func(e logEvent) bool { return e.Ev == "frozen" && e.WS == ws }, "the frozen Update")
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// (Another transaction of node-a, a View say, may be frozen too.)
	if n := idleInTransaction(t, url, "node-a"); n < 1 {
		t.Fatalf("%d sessions of node-a idle in a transaction, want the frozen one", n)
	}

	// Other workspaces' transfers, through the other node.
	const others = 3
	var hs []string
	for i := range others {
		other := fmt.Sprint("free-", i)
		b.must(command{Op: "workspace", WS: other})
		hs = append(hs, b.must(command{Op: "create", WS: other, Req: "r1", Model: modelOK}).Handoff)
	}
	for i, id := range hs {
		b.waitState(fmt.Sprint("free-", i), id, "completed")
	}
	if n := idleInTransaction(t, url, "node-a"); n < 1 {
		t.Fatalf("the frozen transaction ended before the other workspaces' transfers completed (%d left): "+
			"the machine is too slow for this test's %v IdleInTransactionTimeout", n, frozenIdle)
	}

	// The frozen workspace's transfer: fenced once the server ended the
	// frozen transaction and the lease lapsed.
	got := b.waitState(ws, h.Handoff, "interrupted")
	if got.Attempt != 1 {
		t.Errorf("attempt = %d, want 1", got.Attempt)
	}
	if n := idleInTransaction(t, url, "node-a"); n != 0 {
		t.Errorf("%d sessions of node-a still idle in a transaction after the fencing, want 0", n)
	}

	a.send(command{Op: "release"})
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r := a.recv(); !r.OK {
		t.Fatalf("release: %+v", r)
	}
	var unfrozen logEvent
	a.waitLog(func(e logEvent) bool { unfrozen = e; return e.Ev == "unfrozen" && e.WS == ws }, "the end of the frozen Update")
	if !strings.Contains(unfrozen.Outcome, "pgstore: database failure") {
		t.Errorf("the frozen Update returned %q, want pgstore.ErrDatabase (its connection gone)", unfrozen.Outcome)
	}
	if diff := cmp.Diff([2]int{0, 0}, [2]int{a.count("launch", ws), b.count("launch", ws)}); diff != "" {
		t.Errorf("launches [A B] (-want +got):\n%s", diff)
	}
	got = a.must(command{Op: "get", WS: ws, Handoff: h.Handoff})
	if got.State != "interrupted" || got.Attempt != 1 {
		t.Errorf("after the frozen node resumed: %+v, want attempt 1 interrupted", got)
	}
	if n := liveLaunches(t, url, schema, ws); n != 0 {
		t.Errorf("%d live launch records in %s, want 0: the frozen Update's is not kept", n, ws)
	}
}

// idleInTransaction counts the server's sessions of the application
// name that are idle inside a transaction.
func idleInTransaction(t *testing.T, url, app string) int {
	t.Helper()
	var n int
	queryRow(t, url, "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND state LIKE 'idle in transaction%'", []any{app}, &n)
	return n
}

// liveLaunches counts the live launch records of workspace ws.
func liveLaunches(t *testing.T, url, schema, ws string) int {
	t.Helper()
	var n int
	queryRow(t, url, "SELECT count(*) FROM "+pgx.Identifier{schema, "launches"}.Sanitize()+" WHERE workspace = $1 AND NOT gone", []any{ws}, &n)
	return n
}

// queryRow runs a one-row query on a connection of its own.
func queryRow(t *testing.T, url, sql string, args []any, dst ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	if err := c.QueryRow(ctx, sql, args...).Scan(dst...); err != nil {
		t.Fatal(err)
	}
}
