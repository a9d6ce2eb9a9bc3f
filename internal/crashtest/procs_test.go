//go:build linux

package crashtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is a live (not zombie) process of a run.
type proc struct {
	pid    int
	start  string // start time in clock ticks since boot, from /proc/<pid>/stat
	launch string // its BATON_LAUNCH_ID
}

// statOf returns pid's start time, "" when it no longer runs code (missing,
// or a zombie).
func statOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return ""
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[19]
}

// scan returns the live processes whose environment carries
// CRASHTEST_RUN=<run>, in the order they were read.
func scan(run string) []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	mark := []byte("CRASHTEST_RUN=" + run)
	var out []proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		var launch string
		found := false
		for _, kv := range bytes.Split(env, []byte{0}) {
			switch {
			case bytes.Equal(kv, mark):
				found = true
			case bytes.HasPrefix(kv, []byte("BATON_LAUNCH_ID=")):
				launch = string(kv[len("BATON_LAUNCH_ID="):])
			}
		}
		if !found {
			continue
		}
		if st := statOf(pid); st != "" {
			out = append(out, proc{pid: pid, start: st, launch: launch})
		}
	}
	return out
}

// twoAgents reports two launches that ran at one moment, from a scan and a
// second look after it: a scan is not atomic, but if a process read
// earlier (x) still runs, with the same start time, after the scan, then
// it ran when every process read after it (y) was read, so x and y ran at
// once. "" when there is no such pair.
func twoAgents(seen []proc) string {
	launches := map[string]bool{}
	for _, p := range seen {
		launches[p.launch] = true
	}
	if len(launches) < 2 {
		return ""
	}
	for i, x := range seen {
		if statOf(x.pid) != x.start {
			continue
		}
		for _, y := range seen[i+1:] {
			if y.launch != x.launch {
				return fmt.Sprintf("pid %d of launch %q and pid %d of launch %q ran at once", x.pid, x.launch, y.pid, y.launch)
			}
		}
	}
	return ""
}

// sampler scans /proc for a run's processes until stopped, and keeps every
// moment it saw two launches running.
type sampler struct {
	stop    context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	samples int
	bad     []string
}

func startSampler(run string) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sampler{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			msg := twoAgents(scan(run))
			s.mu.Lock()
			s.samples++
			if msg != "" && len(s.bad) < 10 {
				s.bad = append(s.bad, msg)
			}
			s.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// finish stops the sampler and returns its sample count and violations.
func (s *sampler) finish() (int, []string) {
	s.stop()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.bad
}

// killRun SIGKILLs whatever of a run still runs (the cleanup of a failed
// test: only processes that carry the run's mark).
func killRun(t *testing.T, run string) {
	t.Helper()
	for _, p := range scan(run) {
		if statOf(p.pid) == p.start {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// TestTwoAgents: a pair is reported only when the process read first still
// runs with the start time it was read with.
func TestTwoAgents(t *testing.T) {
	self := os.Getpid()
	start := statOf(self)
	if start == "" {
		t.Fatal("no start time for this process")
	}
	parent := os.Getppid()
	tests := []struct {
		name string
		seen []proc
		want bool
	}{
		{"one launch", []proc{{self, start, "a"}, {parent, statOf(parent), "a"}}, false},
		{"two launches, first still runs", []proc{{self, start, "a"}, {parent, statOf(parent), "b"}}, true},
		{"two launches, first gone since", []proc{{self, start + "0", "a"}, {parent, statOf(parent), "b"}}, false},
		{"none", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := twoAgents(tc.seen) != ""; got != tc.want {
				t.Errorf("twoAgents(%v) reported %t, want %t", tc.seen, got, tc.want)
			}
		})
	}
}
