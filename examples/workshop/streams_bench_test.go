package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkStalledStreams measures what stalled event-stream readers cost
// the others: 200 readers, 50 of which never read (a 4 KiB receive
// buffer), while transfers run in 4 workspaces and a fifth gets 150 KB
// instructions (so that the stalled readers' buffers fill and the
// server's writes to them block, until -stream-write-timeout drops
// them). It reports the delivery lag (commit to arrival) of the handoff
// events at the 150 live readers, p50 and p99, and how many stalled
// streams the server dropped. Run it once:
//
//	go test ./examples/workshop -run '^$' -bench BenchmarkStalledStreams -benchtime 40x
func BenchmarkStalledStreams(b *testing.B) {
	const workspaces, readers, stalled = 4, 200, 50
	args := append([]string{"-log-level", "error", "-max-streams", "400", "-stream-write-timeout", "2s"}, benchDemo...)
	p := startBinary(b, "", args...)
	type wsrc struct{ ws, src string }
	var wss []wsrc
	for range workspaces {
		ws := p.workspace("demo-1")
		wss = append(wss, wsrc{ws, p.session(ws)})
	}
	noise := p.workspace("demo-1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The stalled readers: half on the transfer workspaces, half on the
	// noisy one.
	var conns []net.Conn
	for i := range stalled {
		ws := noise
		if i%2 == 0 {
			ws = wss[i%workspaces].ws
		}
		c := rawConn(b, p.addr)
		fmt.Fprintf(c, "GET /api/workspaces/%s/events HTTP/1.1\r\nHost: %s\r\n\r\n", ws, p.addr)
		conns = append(conns, c)
	}
	// The live readers: one per workspace drives its transfers, the others
	// record the lag of every handoff event.
	live := readers - stalled
	drivers := make([]<-chan sseEvent, workspaces)
	var mu sync.Mutex
	var lags []time.Duration
	var wg sync.WaitGroup
	for i := range live {
		w := wss[i%workspaces]
		events := p.subscribe(ctx, w.ws, "")
		if i < workspaces {
			drivers[i] = events
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range events {
				if ev.Event != "handoff" {
					continue
				}
				var d eventJSON
				if json.Unmarshal([]byte(ev.Data), &d) == nil {
					lag := time.Since(d.Handoff.UpdatedAt)
					mu.Lock()
					lags = append(lags, lag)
					mu.Unlock()
				}
			}
		}()
	}
	// The noise: 150 KB instructions, queued behind a turn that runs.
	p.session(noise)
	text := strings.Repeat("x", 150_000)
	stopNoise := make(chan struct{})
	var noiseWG sync.WaitGroup
	noiseWG.Add(1)
	go func() {
		defer noiseWG.Done()
		for {
			select {
			case <-stopNoise:
				return
			case <-time.After(20 * time.Millisecond):
				p.do("POST", "/api/workspaces/"+noise+"/messages", map[string]any{"text": text})
			}
		}
	}()
	counts := split(b.N, workspaces)
	b.ResetTimer()
	var tw sync.WaitGroup
	for i, w := range wss {
		tw.Add(1)
		go func() {
			defer tw.Done()
			src := w.src
			for j := range counts[i] {
				r := p.do("POST", "/api/workspaces/"+w.ws+"/session-handoffs", handoffReq(fmt.Sprintf("stall-%d", j), src, "demo-2", true))
				if r.Status != http.StatusAccepted {
					b.Errorf("create: %d %s", r.Status, r.Raw)
					return
				}
				target, _, err := followSSE(drivers[i], str(r.Body, "handoff", "id"))
				if err != nil {
					b.Error(err)
					return
				}
				src = target
			}
		}()
	}
	tw.Wait()
	b.StopTimer()
	close(stopNoise)
	noiseWG.Wait()
	// Dropped stalled streams: the server closed them (a read sees the
	// end after the buffered bytes).
	dropped := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		buf := make([]byte, 1<<16)
		for {
			if _, err := c.Read(buf); err != nil {
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					dropped++
				}
				break
			}
		}
	}
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	b.ReportMetric(float64(pct(lags, 0.5).Microseconds())/1000, "lag-p50-ms")
	b.ReportMetric(float64(pct(lags, 0.99).Microseconds())/1000, "lag-p99-ms")
	b.ReportMetric(float64(len(lags)), "events")
	b.ReportMetric(float64(dropped), "stalled-dropped")
}
