package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/host"
)

// BenchmarkHostDrain runs a real rpchost process with 1,000 idle sessions
// attached over 100 unix socket connections, sends it the drain signal
// (SIGUSR1), and measures until the process has exited: drain-ms. In the
// last-turn cases one more session runs a 100 ms turn when the signal
// comes, and settle-to-exit-ms is the time from its agent_settled (as the
// client receives it) to the exit: with the settle subscription, and with
// the activity snapshot only (the 50 ms sweep parks it).
//
//	go test ./examples/rpchost -run '^$' -bench BenchmarkHostDrain -benchtime 3x
func BenchmarkHostDrain(b *testing.B) {
	for _, bc := range []struct {
		name, hooks string
		turn        bool
	}{
		{"idle-1000", "all", false},
		{"last-turn/settle-hook", "all", true},
		{"last-turn/sweep-only", "activity", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var drain, settle time.Duration
			for range b.N {
				b.StopTimer()
				d, s := processDrain(b, bc.hooks, bc.turn)
				drain += d
				settle += s
			}
			b.ReportMetric(float64(drain.Microseconds())/1000/float64(b.N), "drain-ms/op")
			if bc.turn {
				b.ReportMetric(float64(settle.Microseconds())/1000/float64(b.N), "settle-to-exit-ms/op")
			}
		})
	}
}

func processDrain(b *testing.B, hooks string, turn bool) (drain, settleToExit time.Duration) {
	const conns, perConn = 100, 10
	dir := tempDir(b)
	sock := filepath.Join(dir, "h.sock")
	p := startServe(b, sock, "-hooks", hooks)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var settledAt atomic.Int64
	clients := make([]*host.Client, conns)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := host.Dial(ctx, sock, host.ClientOptions{OnRecord: func(r host.Record) {
				if r.Type == host.EventAgentSettled {
					settledAt.Store(time.Now().UnixNano())
				}
			}})
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
			for j := range perConn {
				if _, err := c.Open(ctx, filepath.Join(dir, fmt.Sprintf("s%d-%d.jsonl", i, j)), ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	if turn {
		s, err := clients[0].Open(ctx, filepath.Join(dir, "busy.jsonl"), "")
		if err == nil {
			err = clients[0].Prompt(ctx, s.SessionID, "sleep 100")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StartTimer()
	start := time.Now()
	p.signal(syscall.SIGUSR1)
	if code := p.waitExit(); code != 0 {
		b.Fatalf("exit = %d", code)
	}
	end := time.Now()
	b.StopTimer()
	if turn {
		settleToExit = end.Sub(time.Unix(0, settledAt.Load()))
	}
	return end.Sub(start), settleToExit
}
