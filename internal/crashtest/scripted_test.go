//go:build unix

package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// run is one run of the program on dir: its output lines, and whether it
// was killed.
type run struct {
	lines  []string
	killed bool
}

// start runs the program with args; kill, when set, is called with each
// output line and returns true to SIGKILL the program then. after, when
// positive, kills it after that long instead.
func start(t *testing.T, dir string, args []string, kill func(line string) bool, after time.Duration) run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins["scripted"], append([]string{"-dir", filepath.Join(dir, "db"), "-log", filepath.Join(dir, "launches.log")}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var r run
	if after > 0 {
		timer := time.AfterFunc(after, func() { _ = cmd.Process.Kill() })
		defer timer.Stop()
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		r.lines = append(r.lines, sc.Text())
		if kill != nil && kill(sc.Text()) {
			_ = cmd.Process.Kill()
			break
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(interface{ Signaled() bool }); ok && ws.Signaled() {
		r.killed = true
	} else if err != nil {
		t.Fatalf("the scripted program %v: %v\n%s", args, err, stderr.String())
	}
	return r
}

// events counts the commit and spawn lines.
func events(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "commit ") || strings.HasPrefix(l, "spawn ") {
			n++
		}
	}
	return n
}

// state is what the checks read from a store.
type state struct {
	handoffs map[baton.HandoffID]store.Handoff
	res      map[baton.WorkspaceID]store.Reservation
	pending  map[baton.WorkspaceID]baton.HandoffID
	wakeups  map[baton.WorkspaceID][]store.Wakeup
	live     []store.Launch
	running  []store.Session
}

func read(t *testing.T, dir string) state {
	t.Helper()
	st, err := badgerstore.Open(filepath.Join(dir, "db"), badgerstore.Options{Small: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := state{handoffs: map[baton.HandoffID]store.Handoff{}, res: map[baton.WorkspaceID]store.Reservation{},
		pending: map[baton.WorkspaceID]baton.HandoffID{}, wakeups: map[baton.WorkspaceID][]store.Wakeup{}}
	err = st.View(context.Background(), func(tx store.Tx) error {
		wss, err := tx.ListWorkspaces()
		if err != nil {
			return err
		}
		for _, w := range wss {
			hs, err := tx.ListHandoffs(w.ID)
			if err != nil {
				return err
			}
			for _, h := range hs {
				s.handoffs[h.ID] = h
			}
			if r, err := tx.GetReservation(w.ID); err == nil {
				s.res[w.ID] = r
			}
			if p, err := tx.PendingHandoffs(w.ID); err == nil && len(p) > 0 {
				s.pending[w.ID] = p[0].ID
			}
			if s.wakeups[w.ID], err = tx.ListWakeups(w.ID, ""); err != nil {
				return err
			}
			sess, err := tx.ListSessions(w.ID)
			if err != nil {
				return err
			}
			for _, x := range sess {
				if x.Status == store.SessionRunning {
					s.running = append(s.running, x)
				}
			}
		}
		s.live, err = tx.LiveLaunches("")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type logLine struct {
	Launch  baton.LaunchID  `json:"launch"`
	Session baton.SessionID `json:"session"`
	Handoff baton.HandoffID `json:"handoff"`
	Attempt int             `json:"attempt"`
	Turn    string          `json:"turn"`
}

func launchLog(t *testing.T, dir string) []logLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "launches.log"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var x logLine
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("launch log line %q: %v", l, err)
		}
		out = append(out, x)
	}
	return out
}

// recoverAndCheck restarts the program on dir with Recover after a crash
// whose run printed lines, and checks the rules.
func recoverAndCheck(t *testing.T, dir string, crashed run) {
	t.Helper()
	before := read(t, dir)
	logBefore := launchLog(t, dir)
	rec := start(t, dir, []string{"-recover"}, nil, 0)
	recovered := false
	for _, l := range rec.lines {
		recovered = recovered || strings.HasPrefix(l, "recovered ")
	}
	if rec.killed || !recovered {
		t.Fatalf("recover run: %q", rec.lines)
	}
	after := read(t, dir)
	logAfter := launchLog(t, dir)

	if len(logAfter) != len(logBefore) {
		t.Errorf("Recover launched %d processes: %+v", len(logAfter)-len(logBefore), logAfter[len(logBefore):])
	}
	seen := map[string]int{}
	for _, l := range logAfter {
		seen["launch "+string(l.Launch)]++
		switch {
		case l.Turn == "report-only":
			seen[fmt.Sprintf("report-only turn of %s attempt %d", l.Handoff, l.Attempt)]++
		case l.Attempt > 0:
			seen[fmt.Sprintf("target %s (attempt %d)", l.Session, l.Attempt)]++
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%s launched %d times", k, n)
		}
	}
	for _, l := range crashed.lines {
		if id, ok := strings.CutPrefix(l, "created "); ok {
			if _, ok := after.handoffs[baton.HandoffID(id)]; !ok {
				t.Errorf("handoff %s was acknowledged but is gone", id)
			}
		}
	}
	for id, h0 := range before.handoffs {
		h, ok := after.handoffs[id]
		if !ok {
			t.Errorf("handoff %s is gone after Recover", id)
			continue
		}
		if h0.State.Terminal() {
			if h.State != h0.State || len(h.History) != len(h0.History) {
				t.Errorf("settled handoff %s changed: %s (%d records) -> %s (%d)", id, h0.State, len(h0.History), h.State, len(h.History))
			}
			continue
		}
		if h.State != store.StateInterrupted {
			t.Errorf("pending handoff %s: %s -> %s, want interrupted", id, h0.State, h.State)
		}
		if len(h.History) < len(h0.History) || !cmp.Equal(h.History[:len(h0.History)], h0.History, cmpopts.EquateEmpty()) {
			t.Errorf("handoff %s history not kept:\n%s", id, cmp.Diff(h0.History, h.History))
		}
		if h.Report != h0.Report {
			t.Errorf("handoff %s report %q -> %q", id, h0.Report, h.Report)
		}
	}
	for ws, r := range after.res {
		p, pending := after.pending[ws]
		if r.Held != pending || (pending && r.Handoff != p) {
			t.Errorf("workspace %s: reservation held=%v for %s, pending handoff %q", ws, r.Held, r.Handoff, p)
		}
	}
	for ws, p := range after.pending {
		if r, ok := after.res[ws]; !ok || !r.Held {
			t.Errorf("workspace %s: pending handoff %s without a held reservation", ws, p)
		}
	}
	if len(after.live) > 0 {
		t.Errorf("launches still live after Recover: %+v", after.live)
	}
	if len(after.running) > 0 {
		t.Errorf("sessions still running after Recover: %+v", after.running)
	}
	for ws, wakeups := range after.wakeups {
		var h *store.Handoff
		for _, x := range after.handoffs {
			if x.Workspace == ws {
				h = &x
			}
		}
		for _, w := range wakeups {
			switch {
			case w.Status != store.WakeupPending:
				t.Errorf("wakeup %s: %s (%s), want pending", w.ID, w.Status, w.Reason)
			case h == nil:
			case h.State == store.StateCompleted && w.Session != h.TargetSession:
				t.Errorf("wakeup %s on %s, want the completed transfer's target %s", w.ID, w.Session, h.TargetSession)
			case h.State != store.StateCompleted && w.Session != h.SourceSession:
				t.Errorf("wakeup %s on %s, want the source %s (transfer %s)", w.ID, w.Session, h.SourceSession, h.State)
			}
		}
	}
}

// TestCrashAtEveryPoint kills the program right after each durable commit
// and each spawn of a reference run, in turn, then recovers and checks.
func TestCrashAtEveryPoint(t *testing.T) {
	ref := start(t, t.TempDir(), nil, nil, 0)
	n := events(ref.lines)
	if n == 0 || ref.lines[len(ref.lines)-1] == "" {
		t.Fatalf("reference run printed no events: %q", ref.lines)
	}
	for k := 1; k <= n; k++ {
		t.Run("point="+strconv.Itoa(k), func(t *testing.T) {
			dir := t.TempDir()
			r := start(t, dir, []string{"-stop-at", strconv.Itoa(k)}, func(l string) bool { return l == "stop" }, 0)
			if !r.killed {
				// Timing moved the events: the run ended before point k.
				t.Logf("run ended before point %d", k)
			}
			recoverAndCheck(t, dir, r)
		})
	}
	t.Logf("%d crash points (commits and spawns of the reference run: %q)", n, ref.lines)
}

// TestCrashAtRandomMoments kills the program at random moments of its
// run: BATON_CRASH_SEEDS of them (default 4).
func TestCrashAtRandomMoments(t *testing.T) {
	seeds := 4
	if v := os.Getenv("BATON_CRASH_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			t.Fatalf("BATON_CRASH_SEEDS=%q: want a count", v)
		}
		seeds = n
	}
	begin := time.Now()
	start(t, t.TempDir(), nil, nil, 0)
	span := time.Since(begin)
	killed := 0
	for seed := range seeds {
		t.Run("seed="+strconv.Itoa(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 0))
			after := time.Duration(rng.Int64N(int64(span))) + time.Millisecond
			dir := t.TempDir()
			r := start(t, dir, nil, nil, after)
			if r.killed {
				killed++
			}
			recoverAndCheck(t, dir, r)
		})
	}
	t.Logf("%d seeds, %d of them killed mid-run (a run lasts about %v)", seeds, killed, span)
}
