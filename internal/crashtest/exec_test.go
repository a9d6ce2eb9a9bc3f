//go:build linux

package crashtest

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// point is one kill point: the host is SIGKILLed as soon as it prints a
// line starting with at, or, when at is empty, delay after its start (after
// it printed a line starting with after, when set).
type point struct {
	name    string
	summary bool
	at      string
	after   string
	delay   time.Duration
	// reapFail first recovers with an engine that confirms no reap: the
	// workspace must then stay held while anything runs.
	reapFail bool
	// wantLeft: the kill surely leaves an orphan (the grandchild of a
	// ready launch), so a recovery that confirms no reap must find the
	// workspace held.
	wantLeft bool
}

// outcome is what one kill point showed.
type outcome struct {
	landed    string        // the host's last line before the kill
	completed time.Duration // from the host's start to "state completed", if seen
	ready     time.Duration // from the host's start to "source ready", if seen
	samples   int
	held      bool // a recovery found processes left and the workspace held
}

// spawn is a line of the host's spawn log.
type spawn struct {
	Host    string `json:"host"`
	Launch  string `json:"launch"`
	Session string `json:"session"`
	Turn    string `json:"turn"`
	Mode    string `json:"mode"`
	Attempt int    `json:"attempt"`
}

// TestCrashAnyPoint SIGKILLs the host program at each point of a transfer
// (with and without a report) and at random moments, restarts it on the
// same directory in recover mode (Coordinator.Recover), and checks that:
// every process of every launch is gone after the recovery, or the
// workspace is still held (an ordinary start is refused); two launches
// never ran at once (sampled from /proc throughout); no target was launched
// twice for one attempt, and the recovery launched nothing. A host then
// retries what the crash interrupted, which must complete, and shuts down,
// which must leave nothing running.
func TestCrashAnyPoint(t *testing.T) {
	named := []point{
		{name: "plain/stopping", at: "state stopping"},
		{name: "plain/starting", at: "state starting"},
		{name: "plain/target-spawned", at: "spawn target"},
		{name: "plain/completed", at: "state completed"},
		{name: "report/stopping", summary: true, at: "state stopping"},
		{name: "report/generating", summary: true, at: "state generating"},
		{name: "report/report-spawned", summary: true, at: "spawn report"},
		{name: "report/starting", summary: true, at: "state starting"},
		{name: "report/target-spawned", summary: true, at: "spawn target"},
		{name: "report/completed", summary: true, at: "state completed"},
		{name: "report/stopping/reap-fail", summary: true, at: "state stopping", reapFail: true},
		{name: "plain/completed/reap-fail", at: "state completed", reapFail: true, wantLeft: true},
	}
	n := 4
	if s := os.Getenv("BATON_CRASH_POINTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			t.Fatalf("BATON_CRASH_POINTS=%q: want a count", s)
		}
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BATON_CRASH_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("BATON_CRASH_SEED=%q: %v", s, err)
		}
		seed = v
	}
	var (
		ran, random, samples, held int
		full, span                 time.Duration
	)
	record := func(o outcome) {
		ran++
		samples += o.samples
		if o.held {
			held++
		}
		full = max(full, o.completed)
		if o.completed > 0 && o.ready > 0 {
			span = max(span, o.completed-o.ready)
		}
	}
	for _, p := range named {
		t.Run(p.name, func(t *testing.T) {
			o := runPoint(t, p)
			t.Logf("killed after %q", o.landed)
			record(o)
		})
	}
	if full == 0 || span == 0 {
		full, span = 2*time.Second, time.Second
	}
	// Half the random moments fall anywhere from the host's start, half in
	// the transfer itself (from the source's readiness).
	rng := rand.New(rand.NewPCG(seed, 0))
	for i := range n {
		p := point{summary: i%4 < 2, delay: time.Duration(rng.Int64N(int64(full + full/10)))}
		if i%2 == 1 {
			p.after, p.delay = "source ready", time.Duration(rng.Int64N(int64(span+span/10)))
		}
		p.name = fmt.Sprintf("random/%d/summary=%t/%s+%s", i, p.summary, cmp.Or(p.after, "start"), p.delay.Round(time.Millisecond))
		t.Run(p.name, func(t *testing.T) {
			o := runPoint(t, p)
			t.Logf("killed after %q", o.landed)
			record(o)
			random++
		})
	}
	t.Logf("%d kill points ran (%d of them random, seed %d; BATON_CRASH_POINTS scales the random ones); %d /proc samples; the workspace was found held with processes left %d times",
		ran, random, seed, samples, held)
}

// runPoint runs the host, kills it at p, recovers, and checks the
// invariants.
func runPoint(t *testing.T, p point) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	t.Cleanup(func() { killRun(t, dir) })
	var o outcome
	smp := startSampler(dir)
	defer func() {
		// Once more if the test fails early: finish is idempotent.
		smp.finish()
	}()

	args := []string{"-mode", "run"}
	if p.summary {
		args = append(args, "-summary")
	}
	h := startHost(t, dir, args...)
	begun := time.Now()
	var timer <-chan time.Time
	if p.at == "" && p.after == "" {
		timer = time.After(p.delay)
	}
wait:
	for {
		select {
		case line, ok := <-h.lines:
			if !ok {
				h.kill()
				t.Fatalf("the host ended before the kill point; it said:\n%s\nstderr:\n%s", h.said(), h.stderr.String())
			}
			if strings.HasPrefix(line, "error") {
				h.kill()
				t.Fatalf("host: %s\nstderr:\n%s", line, h.stderr.String())
			}
			o.landed = line
			switch {
			case strings.HasPrefix(line, "state completed"):
				o.completed = time.Since(begun)
			case strings.HasPrefix(line, "source ready"):
				o.ready = time.Since(begun)
			}
			if p.at == "" && p.after != "" && timer == nil && strings.HasPrefix(line, p.after) {
				timer = time.After(p.delay)
			}
			if p.at != "" && strings.HasPrefix(line, p.at) {
				break wait
			}
		case <-timer:
			break wait
		case <-ctx.Done():
			h.kill()
			t.Fatalf("no %q from the host; it said:\n%s", p.at, h.said())
		}
	}
	h.kill()

	if p.reapFail {
		out := runHost(t, ctx, dir, "recover", "-reap-fail")
		left := scan(dir)
		t.Logf("recovery that confirms no reap, with %d processes left, said:\n%s", len(left), strings.Join(out, "\n"))
		switch {
		case len(left) > 0:
			if !hasLine(out, "held start=refused") {
				t.Errorf("after a recovery that confirmed no reap, %d processes of the run still run and the workspace was released", len(left))
			}
			o.held = true
		case p.wantLeft:
			t.Errorf("the kill left no orphan to reap: the test checked nothing")
		}
	}
	out := runHost(t, ctx, dir, "recover")
	left := scan(dir)
	if err := checkRecovered(out, left); err != nil {
		t.Error(err)
	}
	if len(left) > 0 {
		o.held = true
		t.Logf("Recover left %d processes running, workspace held: %v", len(left), left)
	}

	// The user retries what the crash interrupted; the retrying host then
	// shuts down, which stops what it launched.
	out = runHost(t, ctx, dir, "retry")
	if !hasLine(out, "settled completed") && !hasLine(out, "nothing to retry") {
		t.Errorf("the retry did not complete:\n%s", strings.Join(out, "\n"))
	}
	t.Logf("retry: %s", out[len(out)-1])
	if left := scan(dir); len(left) > 0 {
		t.Errorf("after the retrying host shut down, %v still run", left)
	}

	var bad []string
	o.samples, bad = smp.finish()
	for _, b := range bad {
		t.Errorf("two agents in one workspace: %s", b)
	}
	checkSpawns(t, filepath.Join(dir, "spawns"))
	return o
}

// checkRecovered is the invariant after a recovery that said out: every
// process of the run is gone (left is empty), or the workspace is held (an
// ordinary start was refused).
func checkRecovered(out []string, left []proc) error {
	switch {
	case len(left) > 0 && !hasLine(out, "held start=refused"):
		return fmt.Errorf("after Recover %d processes of the run still run (%v) and the workspace was released; recovery said:\n%s",
			len(left), left, strings.Join(out, "\n"))
	case !hasLine(out, "released") && !hasLine(out, "no workspace") && !hasLine(out, "held start=refused"):
		return fmt.Errorf("recovery did not say what it left:\n%s", strings.Join(out, "\n"))
	}
	return nil
}

// TestCrashCheckCatchesNoReaper runs the check on a broken host, whose
// engine does not say it can reap (so baton assumes its processes died
// with their host): the grandchild of the killed host's target still runs
// after the recovery released the workspace, and checkRecovered must say
// so.
func TestCrashCheckCatchesNoReaper(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	t.Cleanup(func() { killRun(t, dir) })
	h := startHost(t, dir, "-mode", "run")
	for line := range h.lines {
		if strings.HasPrefix(line, "state completed") {
			break
		}
	}
	h.kill()
	out := runHost(t, ctx, dir, "recover", "-no-reaper")
	left := scan(dir)
	if len(left) == 0 {
		t.Fatalf("nothing of the killed host outlived it; recovery said:\n%s", strings.Join(out, "\n"))
	}
	if err := checkRecovered(out, left); err == nil {
		t.Errorf("checkRecovered passed a recovery that released the workspace while %v still run; it said:\n%s", left, strings.Join(out, "\n"))
	}
}

// checkSpawns reads the spawn log: the recovery launched nothing, and no
// target or report-only turn was launched twice for one attempt.
func checkSpawns(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	seen := map[string]spawn{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var s spawn
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("spawn log line %q: %v", line, err)
		}
		if s.Host == "recover" {
			t.Errorf("the %s host launched %s (session %s, %s turn): a recovery must launch nothing", s.Host, s.Launch, s.Session, s.Turn)
		}
		if s.Attempt == 0 {
			continue
		}
		key := fmt.Sprintf("%s/%d/%s", s.Session, s.Attempt, s.Turn)
		if prev, ok := seen[key]; ok {
			t.Errorf("session %s was launched twice for attempt %d (%s turn): %s and %s", s.Session, s.Attempt, s.Turn, prev.Launch, s.Launch)
		}
		seen[key] = s
	}
}

// hostRun is a running host program.
type hostRun struct {
	cmd    *osexec.Cmd
	lines  chan string
	stderr bytes.Buffer
	mu     sync.Mutex
	out    []string
	once   sync.Once
}

func startHost(t *testing.T, dir string, args ...string) *hostRun {
	t.Helper()
	args = append(args, "-dir", dir, "-agent", bins["agent"], "-spawnlog", filepath.Join(dir, "spawns"))
	h := &hostRun{cmd: osexec.Command(bins["host"], args...), lines: make(chan string, 256)}
	h.cmd.Stderr = &h.stderr
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.mu.Lock()
			h.out = append(h.out, sc.Text())
			h.mu.Unlock()
			h.lines <- sc.Text()
		}
	}()
	return h
}

// kill SIGKILLs the host and reaps it.
func (h *hostRun) kill() {
	h.once.Do(func() {
		h.cmd.Process.Signal(syscall.SIGKILL)
		for range h.lines {
		}
		h.cmd.Wait()
	})
}

func (h *hostRun) said() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.out, "\n")
}

// runHost runs the host in mode to its end and returns its lines; it fails
// the test on an error line or a failed exit.
//
// A host that finds the store's directory locked is run again, for up to
// lockWait: the killed host may have been forking an agent, and the child
// holds a copy of the lock's descriptor until it execs (the descriptor is
// close-on-exec), a moment that a loaded machine can stretch past the
// killed host's reaping. A lock held longer fails the test.
func runHost(t *testing.T, ctx context.Context, dir, mode string, extra ...string) []string {
	t.Helper()
	args := append([]string{"-mode", mode, "-dir", dir, "-agent", bins["agent"], "-spawnlog", filepath.Join(dir, "spawns")}, extra...)
	var (
		b      []byte
		err    error
		stderr bytes.Buffer
	)
	for deadline, tries := time.Now().Add(lockWait), 1; ; tries++ {
		cmd := osexec.CommandContext(ctx, bins["host"], args...)
		stderr.Reset()
		cmd.Stderr = &stderr
		b, err = cmd.Output()
		if err == nil || !bytes.Contains(b, []byte("directory in use")) || time.Now().After(deadline) {
			if tries > 1 {
				t.Logf("%s %v: the directory was locked; ran %d times", mode, extra, tries)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if err != nil {
		t.Fatalf("%s %v: %v; it said:\n%s\nstderr:\n%s", mode, extra, err, b, stderr.String())
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "error") {
			t.Errorf("%s %v: %s", mode, extra, l)
		}
	}
	return lines
}

// lockWait bounds how long runHost waits for a killed host's lock to go.
const lockWait = 5 * time.Second

func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
