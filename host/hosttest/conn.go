package hosttest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/host"
)

// Conn is a client connection that records every record it receives,
// responses and events, in wire order, so that a test can wait for one
// record and later assert the order of all of them. Its methods fail the
// test that dialled it (t.Fatalf) instead of returning errors, so they
// belong on that test's goroutine; Client, Records, Count, IsClosed and
// Order fail nothing and may be called from any goroutine. Every wait is
// bounded by DefaultTimeout.
type Conn struct {
	t      testing.TB
	client *host.Client
	mu     sync.Mutex
	recs   []host.Record
	notify chan struct{}
}

// Dial connects to the host socket at sock and records what it receives.
// It fails t when nothing answers within DefaultTimeout; the connection is
// closed at t's cleanup.
func Dial(t testing.TB, sock string) *Conn {
	t.Helper()
	conn := &Conn{t: t, notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), DefaultTimeout)
	defer cancel()
	c, err := host.Dial(ctx, sock, conn.record)
	if err != nil {
		t.Fatal(err)
	}
	conn.client = c
	t.Cleanup(func() { _ = c.Close() })
	return conn
}

func (c *Conn) record(r host.Record) {
	c.mu.Lock()
	c.recs = append(c.recs, r)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// Client returns the connection's client, for what Conn does not wrap: a
// command expected to fail (with a Context), Close.
func (c *Conn) Client() *host.Client { return c.client }

// Records returns a copy of the records received so far, in wire order.
func (c *Conn) Records() []host.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.recs)
}

// Count returns how many of the records received so far match, without
// copying them.
func (c *Conn) Count(match func(host.Record) bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.recs {
		if match(r) {
			n++
		}
	}
	return n
}

// must fails the test when err is not nil, naming the command.
func (c *Conn) must(cmd string, err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("%s: %v", cmd, err)
	}
}

// Info returns get_protocol_info; it fails the test when that fails.
func (c *Conn) Info() host.Info {
	c.t.Helper()
	info, err := c.client.Info(Context(c.t))
	c.must("get_protocol_info", err)
	return info
}

// Open opens the session at path and returns its handle; it fails the
// test when open_session fails.
func (c *Conn) Open(path string) string {
	c.t.Helper()
	id, err := c.client.Open(Context(c.t), path, "")
	c.must("open_session", err)
	return id
}

// Prompt prompts the session; it fails the test when prompt fails.
func (c *Conn) Prompt(sessionID, text string) {
	c.t.Helper()
	c.must("prompt", c.client.Prompt(Context(c.t), sessionID, text))
}

// Abort aborts the session's turn; it fails the test when abort fails.
func (c *Conn) Abort(sessionID string) {
	c.t.Helper()
	c.must("abort", c.client.Abort(Context(c.t), sessionID))
}

// State returns the session's get_state; it fails the test when get_state
// fails.
func (c *Conn) State(sessionID string) host.SessionState {
	c.t.Helper()
	st, err := c.client.State(Context(c.t), sessionID)
	c.must("get_state", err)
	return st
}

// WaitFor returns the first record received that matches, waiting for it.
// It fails the test, naming what it waited for and the last records
// received, when the connection ends first or nothing matches within
// DefaultTimeout.
func (c *Conn) WaitFor(what string, match func(host.Record) bool) host.Record {
	c.t.Helper()
	deadline := time.After(DefaultTimeout)
	next := 0 // records before next were already checked
	for {
		if r, ok := c.scan(&next, match); ok {
			return r
		}
		select {
		case <-c.notify:
		case <-c.client.Done():
			if r, ok := c.scan(&next, match); ok {
				return r
			}
			c.t.Fatalf("connection closed before %s; got %v", what, tail(Labels(c.Records())))
		case <-deadline:
			c.t.Fatalf("no %s within %v; got %v", what, DefaultTimeout, tail(Labels(c.Records())))
		}
	}
}

// scan checks the records from *next on, without copying them.
func (c *Conn) scan(next *int, match func(host.Record) bool) (host.Record, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ; *next < len(c.recs); *next++ {
		if match(c.recs[*next]) {
			return c.recs[*next], true
		}
	}
	return host.Record{}, false
}

// tail keeps the last labels of a long record list for a failure message.
func tail(ls []string) []string {
	if len(ls) > 40 {
		return append([]string{"..."}, ls[len(ls)-40:]...)
	}
	return ls
}

// WaitClosed waits until the connection has ended (the host closed it)
// and every record was delivered; it fails the test when that takes longer
// than DefaultTimeout.
func (c *Conn) WaitClosed() {
	c.t.Helper()
	select {
	case <-c.client.Done():
	case <-time.After(DefaultTimeout):
		c.t.Fatalf("connection still open; got %v", Labels(c.Records()))
	}
}

// IsClosed reports whether the connection has ended, without waiting.
func (c *Conn) IsClosed() bool {
	select {
	case <-c.client.Done():
		return true
	default:
		return false
	}
}

// Order is WireOrder of the records received so far, followed by Closed
// once the connection has ended: the order to assert, with CheckOrder,
// after a handoff.
func (c *Conn) Order(sessionID string, keep ...string) []string {
	out := WireOrder(c.Records(), sessionID, keep...)
	if c.IsClosed() {
		out = append(out, Closed)
	}
	return out
}
