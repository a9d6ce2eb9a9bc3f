package host

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHostDrain parks 1,000 idle sessions attached over 100 real unix
// socket connections. drain-ms is the time from Drain to Done (every
// session parked, every connection closed). In the settle cases one more
// session runs a 100 ms turn when the drain starts; settle-to-done-ms is
// the time from that last turn settling to Done: immediate with a settle
// subscription, within one sweep (50 ms) without.
//
//	go test ./engine/host -run '^$' -bench BenchmarkHostDrain -benchtime 3x
func BenchmarkHostDrain(b *testing.B) {
	cases := []struct {
		name string
		opts ScriptedOptions
		turn bool
	}{
		{"idle-1000", ScriptedOptions{}, false},
		{"last-turn/settle-hook", ScriptedOptions{}, true},
		{"last-turn/sweep-only", ScriptedOptions{NoSettle: true}, true},
	}
	for _, bc := range cases {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var drain, settleToDone time.Duration
			for range b.N {
				b.StopTimer()
				d, s := drainOnce(b, bc.opts, bc.turn)
				drain += d
				settleToDone += s
			}
			b.ReportMetric(float64(drain.Microseconds())/1000/float64(b.N), "drain-ms/op")
			if bc.turn {
				b.ReportMetric(float64(settleToDone.Microseconds())/1000/float64(b.N), "settle-to-done-ms/op")
			}
		})
	}
}

const benchConns, benchPerConn = 100, 10

func drainOnce(b *testing.B, opts ScriptedOptions, turn bool) (drain, settleToDone time.Duration) {
	rt := NewScripted(opts)
	var settledAt atomic.Int64
	rt.onSettle = func() { settledAt.Store(time.Now().UnixNano()) }
	dir := tempDir(b)
	h, err := New(rt, Options{ClaimDir: filepath.Join(dir, "claims")})
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(dir, "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	served := make(chan error, 1)
	go func() { served <- h.Serve(context.Background(), ln) }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	clients := make([]*Client, benchConns)
	var wg sync.WaitGroup
	errs := make(chan error, benchConns)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(ctx, sock, ClientOptions{})
			if err != nil {
				errs <- err
				return
			}
			clients[i] = c
			for j := range benchPerConn {
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
	if err := h.Drain(nil); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			b.Fatal(err)
		}
	case <-ctx.Done():
		b.Fatalf("drain did not finish; holding %d", len(h.Holding()))
	}
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
