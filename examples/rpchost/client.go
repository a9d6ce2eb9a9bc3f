package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batonhq/baton/host"
)

// reattachLimit bounds how long the client looks for the socket's new
// owner after its session was parked.
const reattachLimit = 30 * time.Second

// printer writes whole lines to stdout from several goroutines.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) raw(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(append(append([]byte(nil), b...), '\n'))
}

func (p *printer) event(fields map[string]any) {
	b, _ := json.Marshal(fields)
	p.raw(b)
}

// failed prints a command's failure; its detail names the wire code.
func (p *printer) failed(err error) {
	p.event(map[string]any{"event": "error", "detail": err.Error()})
}

// attachment is the client's session on one connection.
type attachment struct {
	c          *host.Client
	sessionID  string
	instanceID string
	generation int
	parked     chan struct{} // closed on session_closed handoff_parked
	parkedOnce sync.Once
	successor  atomic.Pointer[string]
	openedID   atomic.Pointer[string]
}

func runClient(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rpchost client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "host unix socket `path` (required)")
	file := fs.String("session", "", "session `file` (required)")
	cwd := fs.String("cwd", "", "working `dir` of the session")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *socket == "" || *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "rpchost client: -socket and -session are required")
		return errUsage
	}
	path, err := filepath.Abs(*file)
	if err != nil {
		return err
	}
	out := &printer{w: stdout}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()

	a, err := attach(ctx, *socket, path, *cwd, out)
	if err != nil {
		return err
	}
	out.event(map[string]any{"event": "opened", "socket": *socket, "sessionId": a.sessionID,
		"instanceId": a.instanceID, "generation": a.generation})
	var pending []string // prompts the old generation did not take
	for {
		select {
		case <-ctx.Done():
			_ = a.c.Close()
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, _ = a.c.CloseSession(cctx, a.sessionID)
				cancel()
				_ = a.c.Close()
				out.event(map[string]any{"event": "closed", "sessionId": a.sessionID})
				return nil
			}
			if line == "" {
				continue
			}
			if err := a.c.Prompt(ctx, a.sessionID, line); err != nil {
				if !errors.Is(err, host.ErrSessionClosed) && !errors.Is(err, host.ErrClosed) {
					out.failed(err)
					continue
				}
				// Not taken by the old generation: the response (or the
				// close) came instead. Send it to the successor.
				pending = append(pending, line)
			}
		case <-a.parked:
			if a, err = reattach(ctx, a, *socket, path, *cwd, out); err != nil {
				return err
			}
			for _, line := range pending {
				if err := a.c.Prompt(ctx, a.sessionID, line); err != nil {
					out.failed(err)
				}
			}
			pending = nil
		case <-a.c.Done():
			select {
			case <-a.parked:
				continue // the parked case reattaches
			default:
			}
			return fmt.Errorf("connection to %s lost without a handoff", *socket)
		}
	}
}

// attach opens path on socket and prints every record of the connection.
func attach(ctx context.Context, socket, path, cwd string, out *printer) (*attachment, error) {
	a := &attachment{parked: make(chan struct{})}
	c, err := host.Dial(ctx, socket, func(r host.Record) {
		out.raw(r.Raw)
		switch {
		case r.Type == "host_superseded" && r.Successor != "":
			a.successor.Store(&r.Successor)
		case r.Type == "session_closed" && r.Reason == "handoff_parked" && r.SessionID == a.id():
			a.parkedOnce.Do(func() { close(a.parked) })
		}
	})
	if err != nil {
		return nil, err
	}
	a.c = c
	info, err := c.Info(ctx)
	if err == nil {
		a.instanceID, a.generation = info.InstanceID, info.Generation
		var id string
		id, err = c.Open(ctx, path, cwd)
		a.setID(id)
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return a, nil
}

// id is the session handle as the record callback sees it.
func (a *attachment) id() string {
	if p := a.openedID.Load(); p != nil {
		return *p
	}
	return ""
}

func (a *attachment) setID(id string) {
	a.sessionID = id
	a.openedID.Store(&id)
}

// reattach reopens path on the socket's new owner after a handoff parked
// the session: on the successor the host_superseded record named, else on
// socket. It retries while nothing new answers there, while the old
// generation still answers, and after retry_after_ms while the path is
// still in use, up to reattachLimit.
func reattach(ctx context.Context, old *attachment, socket, path, cwd string, out *printer) (*attachment, error) {
	_ = old.c.Close()
	target := socket
	if s := old.successor.Load(); s != nil && *s != "" {
		target = *s
	}
	ctx, cancel := context.WithTimeout(ctx, reattachLimit)
	defer cancel()
	for {
		a, err := attach(ctx, target, path, cwd, out)
		wait := 50 * time.Millisecond
		switch {
		case err == nil && a.instanceID != old.instanceID:
			out.event(map[string]any{"event": "reattached", "socket": target, "sessionId": a.sessionID,
				"instanceId": a.instanceID, "generation": a.generation, "previousInstanceId": old.instanceID})
			return a, nil
		case err == nil:
			_ = a.c.Close() // still the old generation
		default:
			var held struct {
				RetryAfterMS int `json:"retry_after_ms"`
			}
			if errors.Is(err, host.ErrPathInUse) && json.Unmarshal(host.ErrorData(err), &held) == nil {
				wait = time.Duration(held.RetryAfterMS) * time.Millisecond
			}
			if !errors.Is(err, host.ErrPathInUse) && !errors.Is(err, host.ErrDraining) && !errors.Is(err, host.ErrClosed) {
				return nil, fmt.Errorf("reopen %s on %s: %w", path, target, err)
			}
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("reopen %s on %s: %w", path, target, ctx.Err())
		}
	}
}
