package main

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
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
			hosttest.MeasureDrains(b, "settle-to-exit-ms/op", func(b *testing.B) (time.Duration, time.Duration) {
				return processDrain(b, bc.hooks, bc.turn)
			})
		})
	}
}

func processDrain(b *testing.B, hooks string, turn bool) (drain, settleToExit time.Duration) {
	const conns, perConn = 100, 10
	dir, sock, p := serveFresh(b, "-hooks", hooks)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var settledAt atomic.Int64
	clients, err := hosttest.OpenMany(ctx, sock, dir, conns, perConn, func(r host.Record) {
		if r.Type == "agent_settled" {
			settledAt.Store(time.Now().UnixNano())
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, c := range clients {
			_ = c.Close()
		}
	}()
	if turn {
		if _, err := hosttest.OpenAndPrompt(ctx, clients[0], filepath.Join(dir, "busy.jsonl"), "sleep 100"); err != nil {
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
