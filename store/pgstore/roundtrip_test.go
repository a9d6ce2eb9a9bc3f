package pgstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/pgstore"
)

// tripProxy is a TCP proxy on 127.0.0.1 in front of the test server that
// counts round trips: each time a client connection sends again after the
// server has answered it. It leaves out the store's own listener and
// notification publisher (known by the application_name in their startup
// messages), so that the count is the pool's: the transactions'.
type tripProxy struct {
	ln     net.Listener
	target string
	trips  atomic.Int64
	wg     sync.WaitGroup

	mu    sync.Mutex
	conns []net.Conn
}

// newTripProxy starts a proxy to the test server and returns it with the
// server URL rewritten to go through it. It stops when the test ends.
func newTripProxy(tb testing.TB) (*tripProxy, string) {
	tb.Helper()
	u, err := url.Parse(serverURL(tb))
	if err != nil {
		tb.Fatalf("BATON_PG_URL: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &tripProxy{ln: ln, target: u.Host}
	u.Host = ln.Addr().String()
	p.wg.Go(p.accept)
	tb.Cleanup(p.close)
	return p, u.String()
}

func (p *tripProxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *tripProxy) track(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *tripProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.track(c)
		p.track(s)
		p.wg.Go(func() { p.serve(c, s) })
	}
}

// serve relays one connection. answered is set when the server has sent
// something since the client last did; the client's next send is a new
// round trip.
func (p *tripProxy) serve(client, server net.Conn) {
	var answered atomic.Bool
	var counted atomic.Bool // false for the store's own background connections
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = relay(client, server, func([]byte) { answered.Store(true) })
	}()
	first := true
	_, _ = relay(server, client, func(b []byte) {
		if first {
			first = false
			counted.Store(!bytes.Contains(b, []byte("baton-pgstore-")))
		}
		if counted.Load() && answered.Swap(false) {
			p.trips.Add(1)
		}
	})
	_ = client.Close()
	_ = server.Close()
	<-done
}

// relay copies from src to dst, calling saw with each chunk before it is
// written.
func relay(dst, src net.Conn, saw func([]byte)) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := src.Read(buf)
		if k > 0 {
			saw(buf[:k])
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
	}
}

// TestRoundTrips counts what the benchmarked operations cost on the wire:
// the transition of BenchmarkPGTransition takes two round trips (BEGIN,
// the lock and the reads, then the writes, the change feed and the
// COMMIT); and it
// logs the round trips of whole transfers through the coordinator (go
// test -v shows them).
func TestRoundTrips(t *testing.T) {
	proxy, url := newTripProxy(t)
	s := openAt(t, url, "", pgstore.Options{MaxConns: 1})
	ctx := t.Context()

	for i, tt := range []struct {
		name  string
		store *pgstore.Store
		each  int64
	}{
		{"transition", s, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ws := seedTransfer(t, tt.store, i)
			// The first one also prepares its statements (pgx caches them).
			if err := transition(ctx, tt.store, ws); err != nil {
				t.Fatal(err)
			}
			const n = 50
			before := proxy.trips.Load()
			for range n {
				if err := transition(ctx, tt.store, ws); err != nil {
					t.Fatal(err)
				}
			}
			got := proxy.trips.Load() - before
			t.Logf("%d transitions: %d round trips", n, got)
			// A pool connection idle for a second is pinged before use:
			// allow one such ping.
			if got < tt.each*n || got > tt.each*n+1 {
				t.Errorf("%d transitions took %d round trips, want %d (%d each)", n, got, tt.each*n, tt.each)
			}
		})
	}

	for _, summary := range []bool{false, true} {
		t.Run(fmt.Sprintf("transfer/summary=%v", summary), func(t *testing.T) {
			co, _ := lifecycleCoordinator(t, s)
			const n = 5
			srcs := make([]store.Session, n)
			for i := range srcs {
				srcs[i] = sourceIn(t, ctx, co.Sessions(), baton.WorkspaceID(fmt.Sprintf("ws-rt-%v-%d", summary, i)))
			}
			before := proxy.trips.Load()
			for _, src := range srcs {
				if err := transfer(ctx, co, src, summary); err != nil {
					t.Fatal(err)
				}
			}
			got := proxy.trips.Load() - before
			t.Logf("%d transfers: %d round trips (%.1f each, Updates and Views, the coordinator's reads included)", n, got, float64(got)/n)
			if got == 0 {
				t.Error("no round trips counted: the proxy is not in the way")
			}
		})
	}
}
