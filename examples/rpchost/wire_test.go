package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/engine/host"
)

// wire is a client connection that records every record, in order.
type wire struct {
	t      testing.TB
	c      *host.Client
	mu     sync.Mutex
	recs   []host.Record
	notify chan struct{}
}

func dial(t testing.TB, sock string) *wire {
	t.Helper()
	w := &wire{t: t, notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, err := host.Dial(ctx, sock, host.ClientOptions{OnRecord: func(r host.Record) {
		w.mu.Lock()
		w.recs = append(w.recs, r)
		w.mu.Unlock()
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	w.c = c
	t.Cleanup(func() { _ = c.Close() })
	return w
}

func (w *wire) records() []host.Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.recs)
}

func (w *wire) call(cmd host.Command) (host.Record, error) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	rec, err := w.c.Call(ctx, cmd)
	if errors.Is(err, context.DeadlineExceeded) {
		w.t.Fatalf("%s: no response", cmd.Type)
	}
	return rec, err
}

func (w *wire) mustCall(cmd host.Command) host.Record {
	w.t.Helper()
	rec, err := w.call(cmd)
	if err != nil {
		w.t.Fatalf("%s: %v", cmd.Type, err)
	}
	return rec
}

func (w *wire) open(path string) string {
	w.t.Helper()
	var res host.OpenResult
	if err := w.mustCall(host.Command{Type: host.CmdOpenSession, SessionPath: path}).DecodeData(&res); err != nil {
		w.t.Fatal(err)
	}
	return res.SessionID
}

func (w *wire) prompt(id, text string) {
	w.t.Helper()
	w.mustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: text})
}

func (w *wire) state(id string) host.SessionState {
	w.t.Helper()
	var st host.SessionState
	if err := w.mustCall(host.Command{Type: host.CmdGetState, SessionID: id}).DecodeData(&st); err != nil {
		w.t.Fatal(err)
	}
	return st
}

func (w *wire) waitFor(what string, pred func(host.Record) bool) host.Record {
	w.t.Helper()
	deadline := time.After(waitLimit)
	next := 0 // records before next were already checked
	for {
		if r, ok := w.scan(&next, pred); ok {
			return r
		}
		select {
		case <-w.notify:
		case <-w.c.Done():
			if r, ok := w.scan(&next, pred); ok {
				return r
			}
			w.t.Fatalf("connection closed before %s; got %v", what, tail(labels(w.records())))
		case <-deadline:
			w.t.Fatalf("no %s within %v; got %v", what, waitLimit, tail(labels(w.records())))
		}
	}
}

// scan checks the records from *next on, without copying them.
func (w *wire) scan(next *int, pred func(host.Record) bool) (host.Record, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ; *next < len(w.recs); *next++ {
		if pred(w.recs[*next]) {
			return w.recs[*next], true
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

func (w *wire) waitClosed() {
	w.t.Helper()
	select {
	case <-w.c.Done():
	case <-time.After(waitLimit):
		w.t.Fatalf("connection still open; got %v", labels(w.records()))
	}
}

func (w *wire) isClosed() bool {
	select {
	case <-w.c.Done():
		return true
	default:
		return false
	}
}

func isType(typ string) func(host.Record) bool {
	return func(r host.Record) bool { return r.Type == typ }
}

func isEvent(typ, id string) func(host.Record) bool {
	return func(r host.Record) bool { return r.Type == typ && r.SessionID == id }
}

func label(r host.Record) string {
	switch r.Type {
	case host.TypeResponse:
		if r.Success {
			return "response:" + r.Command
		}
		return "response:" + r.Command + ":" + r.Error
	case host.EventSessionClosed:
		return r.Type + ":" + string(r.Reason)
	}
	return r.Type
}

func labels(rs []host.Record) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, label(r))
	}
	return out
}

// wireOrder lists, from host_superseded on, the records of one session
// (and the responses) whose labels start with one of keep, and "close"
// when the host closed the connection after them.
func (w *wire) wireOrder(id string, keep ...string) []string {
	var out []string
	for _, r := range w.records() {
		l := label(r)
		if r.Type == host.EventHostSuperseded {
			out = append(out, l)
			continue
		}
		if len(out) == 0 || (r.SessionID != id && r.Type != host.TypeResponse) {
			continue
		}
		for _, k := range keep {
			if strings.HasPrefix(l, k) {
				out = append(out, l)
				break
			}
		}
	}
	if w.isClosed() {
		out = append(out, "close")
	}
	return out
}

func checkOrder(t testing.TB, got, want []string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("wire order (-want +got):\n%s", d)
	}
}
