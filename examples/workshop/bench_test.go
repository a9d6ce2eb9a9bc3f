package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// benchWorkspaces is how many workspaces run transfers at once.
const benchWorkspaces = 50

// benchDemo are the demo engine's delays in the load benchmark: short, so
// that the SDK, the store, HTTP and SSE are what is measured.
var benchDemo = []string{"-demo-ready", "2ms", "-demo-report", "2ms", "-demo-turn", "1h"}

// benchNoSync runs the load benchmark without an fsync per commit
// (BATON_BENCH_NOSYNC=1): on a shared disk the fsyncs' latency, not the
// server, then no longer decides the figures.
var benchNoSync = os.Getenv("BATON_BENCH_NOSYNC") == "1"

// loadStats collects a run's measurements.
type loadStats struct {
	mu     sync.Mutex
	create []time.Duration // Create / POST latency
	lag    []time.Duration // from a change's commit to its delivery
}

func (s *loadStats) add(create time.Duration, lags []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.create = append(s.create, create)
	s.lag = append(s.lag, lags...)
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func (s *loadStats) report(b *testing.B, elapsed time.Duration, rssKiB int64) {
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "transfers/s")
	b.ReportMetric(float64(pct(s.create, 0.50).Microseconds())/1000, "create-p50-ms")
	b.ReportMetric(float64(pct(s.create, 0.99).Microseconds())/1000, "create-p99-ms")
	b.ReportMetric(float64(pct(s.lag, 0.50).Microseconds())/1000, "sse-lag-p50-ms")
	b.ReportMetric(float64(pct(s.lag, 0.99).Microseconds())/1000, "sse-lag-p99-ms")
	b.ReportMetric(float64(rssKiB)/1024, "peak-rss-MiB")
}

// split spreads n transfers over the workers.
func split(n, workers int) []int {
	out := make([]int, workers)
	for i := range n {
		out[i%workers]++
	}
	return out
}

// BenchmarkWorkshopLoad runs transfers (with a report) in 50 workspaces
// at once on the demo engine and the badger store, each workspace one
// transfer after another, b.N transfers in all:
//
//   - via=http: through the built binary's API, each workspace's progress
//     followed on its event stream (the lag is from a change's commit to
//     its arrival on the stream); peak RSS is the server process's.
//   - via=inprocess: the same on the same coordinator and store code in
//     this process, with no HTTP (progress followed on the same change
//     feed); peak RSS is this process's.
//
// Run: go test ./examples/workshop -run '^$' -bench WorkshopLoad -benchtime 1000x
func BenchmarkWorkshopLoad(b *testing.B) {
	b.Run("via=http", benchHTTP)
	b.Run("via=inprocess", benchInProcess)
}

func benchHTTP(b *testing.B) {
	args := append([]string{"-log-level", "error"}, benchDemo...)
	if benchNoSync {
		args = append(args, "-nosync")
	}
	p := startBinary(b, "", args...)
	runHTTPLoad(b, p, func() int64 { return vmHWM(b, p.cmd.Process.Pid) })
}

// runHTTPLoad drives the load through p's API.
func runHTTPLoad(b *testing.B, p *proc, rss func() int64) {
	type wsrc struct{ ws, src string }
	var wss []wsrc
	for range benchWorkspaces {
		ws := p.workspace("demo-1")
		wss = append(wss, wsrc{ws, p.session(ws)})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streams := make([]<-chan sseEvent, len(wss))
	for i, w := range wss {
		streams[i] = p.subscribe(ctx, w.ws, "")
	}
	var st loadStats
	counts := split(b.N, len(wss))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, w := range wss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := w.src
			for j := range counts[i] {
				body := handoffReq(fmt.Sprintf("load-%d", j), src, "demo-2", true)
				t0 := time.Now()
				r := p.do("POST", "/api/workspaces/"+w.ws+"/session-handoffs", body)
				lat := time.Since(t0)
				if r.Status != http.StatusAccepted {
					b.Errorf("create: %d %s", r.Status, r.Raw)
					return
				}
				id := str(r.Body, "handoff", "id")
				target, lags, err := followSSE(streams[i], id)
				if err != nil {
					b.Error(err)
					return
				}
				st.add(lat, lags)
				src = target
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	st.report(b, elapsed, rss())
}

// followSSE reads a workspace's stream until handoff id is completed and
// returns its target session and the delivery lag of each of its events.
func followSSE(events <-chan sseEvent, id string) (string, []time.Duration, error) {
	var lags []time.Duration
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return "", nil, fmt.Errorf("stream ended")
			}
			if ev.Event != "handoff" {
				continue
			}
			var d eventJSON
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				return "", nil, err
			}
			if string(d.Handoff.ID) != id {
				continue
			}
			lags = append(lags, time.Since(d.Handoff.UpdatedAt))
			switch d.Handoff.State {
			case "completed":
				return string(d.Handoff.TargetSession), lags, nil
			case "failed", "interrupted", "cancelled":
				return "", nil, fmt.Errorf("handoff %s %s: %s", id, d.Handoff.State, d.Handoff.Error)
			}
		case <-timeout:
			return "", nil, fmt.Errorf("handoff %s not completed in a minute", id)
		}
	}
}

func benchInProcess(b *testing.B) {
	cfg := config{Data: b.TempDir(), Heartbeat: time.Minute, Demo: DemoTimings{Ready: 2 * time.Millisecond, Report: 2 * time.Millisecond, Turn: time.Hour, SlowReady: time.Second}, NoSync: benchNoSync,
		MCPAddr: "127.0.0.1:9"} // no HTTP here: the demo engine never calls the MCP endpoint
	ctx := context.Background()
	s, err := newServer(ctx, cfg, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		s.stopBackground()
		if err := s.shutdown(ctx); err != nil {
			b.Error(err)
		}
	}()
	type wsrc struct {
		ws  baton.WorkspaceID
		src baton.SessionID
	}
	var wss []wsrc
	for i := range benchWorkspaces {
		ws, err := s.svc.CreateWorkspace(ctx, wsRecord(cfg, i))
		if err != nil {
			b.Fatal(err)
		}
		sess, err := s.svc.Start(ctx, session.TurnRequest{Workspace: ws.ID, Prompt: "build it"})
		if err != nil {
			b.Fatal(err)
		}
		wss = append(wss, wsrc{ws.ID, sess.ID})
	}
	var st loadStats
	counts := split(b.N, len(wss))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, w := range wss {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			src := w.src
			var after int64
			for j := range counts[i] {
				t0 := time.Now()
				h, err := s.co.Create(wctx, handoff.Request{Workspace: w.ws, RequestID: "load-" + strconv.Itoa(j), SourceSession: src, GenerateSummary: true, Target: baton.EngineConfig{Engine: "demo", Model: "demo-2"}})
				lat := time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
				var lags []time.Duration
				for c, err := range s.co.Watch(wctx, w.ws, after) {
					if err != nil {
						b.Error(err)
						return
					}
					after = c.Seq
					if c.Handoff == nil || c.Handoff.ID != h.ID {
						continue
					}
					lags = append(lags, time.Since(c.Handoff.UpdatedAt))
					if c.Handoff.State == "completed" {
						src = c.Handoff.TargetSession
						break
					}
					if c.Handoff.State.Pending() && c.Handoff.State != "failed" && c.Handoff.State != "interrupted" {
						continue
					}
					b.Errorf("handoff %s: %s %s", h.ID, c.Handoff.State, c.Handoff.Error)
					return
				}
				st.add(lat, lags)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	st.report(b, elapsed, vmHWM(b, os.Getpid()))
}

func wsRecord(cfg config, i int) store.Workspace {
	id := baton.WorkspaceID(fmt.Sprintf("ws-load-%d", i))
	return store.Workspace{ID: id, Name: string(id), Config: baton.EngineConfig{Engine: "demo", Model: "demo-1"}}
}

// vmHWM is a process's peak resident set size in KiB, from /proc.
func vmHWM(b *testing.B, pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		var ru syscall.Rusage
		if pid == os.Getpid() && syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
			return ru.Maxrss
		}
		b.Logf("peak RSS unknown: %v", err)
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
