package hosttest

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/host"
)

// OpenMany dials conns connections to the host at sock, all at once, and
// opens perConn sessions on each: connection i opens the files
// s<i>-<j>.jsonl in dir, each client with onRecord. It returns the clients, which the caller owns,
// or the first error of host.Dial or host.Client.Open (or ctx's error),
// having closed every client it opened.
func OpenMany(ctx context.Context, sock, dir string, conns, perConn int, onRecord func(host.Record)) ([]*host.Client, error) {
	clients := make([]*host.Client, conns)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := host.Dial(ctx, sock, onRecord)
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
	if err, failed := <-errs; failed {
		for _, c := range clients {
			if c != nil {
				_ = c.Close()
			}
		}
		return nil, err
	}
	return clients, nil
}

// OpenAndPrompt opens the session at path on c and prompts text on it: a
// session with a turn under way, given a prompt that keeps one running
// ("sleep 100" for host.Scripted). It returns the session's handle, or the
// error of host.Client.Open or host.Client.Prompt.
func OpenAndPrompt(ctx context.Context, c *host.Client, path, text string) (string, error) {
	id, err := c.Open(ctx, path, "")
	if err != nil {
		return "", err
	}
	return id, c.Prompt(ctx, id, text)
}

// MeasureDrains runs b.N drains, one call of drain each, and reports their
// mean duration in milliseconds as drain-ms/op, and the mean of their
// second duration as settleUnit (say "settle-to-done-ms/op": from the
// last turn settling to the end of the drain) when at least one drain
// returned one that is not zero. drain is called with the timer stopped:
// it prepares a host, starts the timer, drains, and stops the timer again.
func MeasureDrains(b *testing.B, settleUnit string, drain func(b *testing.B) (drain, settle time.Duration)) {
	b.ReportAllocs()
	var total, settled time.Duration
	measured := false
	for range b.N {
		b.StopTimer()
		d, s := drain(b)
		total += d
		settled += s
		measured = measured || s != 0
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "drain-ms/op")
	if measured {
		b.ReportMetric(float64(settled.Microseconds())/1000/float64(b.N), settleUnit)
	}
}
