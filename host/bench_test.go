package host_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// BenchmarkHostDrain parks 1,000 idle sessions attached over 100 real unix
// socket connections. drain-ms is the time from Drain to Done (every
// session parked, every connection closed). In the settle cases one more
// session runs a 100 ms turn when the drain starts; settle-to-done-ms is
// the time from that last turn settling to Done: immediate with a settle
// subscription, within one sweep (50 ms) without.
//
//	go test ./host -run '^$' -bench BenchmarkHostDrain -benchtime 3x
func BenchmarkHostDrain(b *testing.B) {
	cases := []struct {
		name string
		opts hosttest.ScriptedOptions
		turn bool
	}{
		{"idle-1000", hosttest.ScriptedOptions{}, false},
		{"last-turn/settle-hook", hosttest.ScriptedOptions{}, true},
		{"last-turn/sweep-only", hosttest.ScriptedOptions{NoSettle: true}, true},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			hosttest.MeasureDrains(b, "settle-to-done-ms/op", func(b *testing.B) (time.Duration, time.Duration) {
				return drainOnce(b, bc.opts, bc.turn)
			})
		})
	}
}

const benchConns, benchPerConn = 100, 10

func drainOnce(b *testing.B, opts hosttest.ScriptedOptions, turn bool) (drain, settleToDone time.Duration) {
	var settledAt atomic.Int64
	opts.OnSettle = func() { settledAt.Store(time.Now().UnixNano()) }
	rt := hosttest.NewScripted(opts)
	s := hosttest.Serve(b, rt, host.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clients, err := hosttest.OpenMany(ctx, s.Socket, s.Dir, benchConns, benchPerConn, nil)
	if err != nil {
		b.Fatal(err)
	}
	if turn {
		if _, err := hosttest.OpenAndPrompt(ctx, clients[0], s.File("busy.jsonl"), "sleep 100"); err != nil {
			b.Fatal(err)
		}
	}

	b.StartTimer()
	start := time.Now()
	if err := s.Host.Drain(""); err != nil {
		b.Fatal(err)
	}
	s.WaitDone(b)
	end := time.Now()
	b.StopTimer()
	for _, c := range clients {
		<-c.Done()
	}
	if turn {
		settleToDone = end.Sub(time.Unix(0, settledAt.Load()))
	}
	return end.Sub(start), settleToDone
}
