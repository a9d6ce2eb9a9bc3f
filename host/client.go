package host

import (
	"context"
	"encoding/json"
	"net"
	"strconv"
	"sync"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/host/internal/wire"
)

// Client speaks the host protocol over one connection: each method sends
// one command and waits for its response, and every record the connection
// receives, events included, goes to the Dial's onRecord in wire order. It
// is safe for concurrent use; the host handles one connection's commands
// in order, one at a time.
//
// A method returns ctx's error, ErrClosed when the connection ends first,
// or, for a failed response, an error matching the sentinel of its code
// (errors.Is(err, ErrPathInUse)) whose ErrorData is the response's.
type Client struct {
	nc       net.Conn
	onRecord func(Record)
	done     chan struct{}

	wmu sync.Mutex // serializes writes

	mu      sync.Mutex
	next    uint64
	pending map[string]chan received // nil once the connection ended
}

// Record is one line a Client received: the response to a command (Type
// "response") or an event (Type is the event's: agent_start,
// agent_settled, message, session_closed, host_superseded, or a
// runtime's own). Fields a record does not carry are empty.
type Record struct {
	Type string `json:"type"`
	// SessionID is the session an event belongs to.
	SessionID string `json:"sessionId"`
	// Command, Success and Error describe a response: the command it
	// answers, whether it succeeded, and the wire code of a failure.
	Command string `json:"command"`
	Success bool   `json:"success"`
	Error   string `json:"error"`
	// Reason and SessionPath are those of session_closed.
	Reason      string `json:"reason"`
	SessionPath string `json:"sessionPath"`
	// InstanceID, Generation and Successor (its socket, "" when unknown)
	// are those of host_superseded.
	InstanceID string `json:"instanceId"`
	Generation int    `json:"generation"`
	Successor  string `json:"-"`
	// Text is a message event's text.
	Text string `json:"text"`
	// Raw is the line as received.
	Raw json.RawMessage `json:"-"`
}

// received is one line as a Client decodes it: its Record, and what only
// the Client reads.
type received struct {
	Record
	ID        string          `json:"id"`
	Data      json.RawMessage `json:"data"`
	ErrorData json.RawMessage `json:"errorData"`
	Successor *wire.Successor `json:"successor"`
}

// SessionState is what get_state answers. Activity is nil when the
// runtime offers no activity snapshot. HostRequests counts the other host
// requests in flight for the session (this get_state excluded). State is
// the runtime's own view, decoded from JSON.
type SessionState struct {
	SessionID   string `json:"sessionId"`
	SessionPath string `json:"sessionPath"`
	Attachments int    `json:"attachments"`
	Busy        bool   `json:"busy"`
	// Activity decodes from the wire's lower-camel names, which
	// encoding/json matches to engine.Activity's fields.
	Activity     *engine.Activity `json:"activity"`
	HostRequests int              `json:"hostRequests"`
	Draining     bool             `json:"draining"`
	State        any              `json:"state"`
}

// record is the Record of r, which was decoded from line.
func (r received) record(line []byte) Record {
	out := r.Record
	out.Raw = append(json.RawMessage(nil), line...)
	if r.Successor != nil {
		out.Successor = r.Successor.Socket
	}
	return out
}

// Dial connects to the host socket at path (a unix socket); onRecord, if
// not nil, is called for every record received, from the Client's one
// reader goroutine: it must not block for long, nor wait on a call of
// this Client (whose answer it would be holding up). A received line over
// 1 MiB, or one that is not a JSON object, ends the connection. Dial
// returns ctx's error, or an ErrClosed error when nothing answers there.
func Dial(ctx context.Context, path string, onRecord func(Record)) (*Client, error) {
	nc, err := new(net.Dialer).DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, baton.Errorf(ErrClosed, "dial %s: %v", path, err)
	}
	c := &Client{nc: nc, onRecord: onRecord, done: make(chan struct{}), pending: map[string]chan received{}}
	go c.readLoop()
	return c, nil
}

// readLoop delivers records until the connection ends, or a line is over
// the limit or not a record (a host of another protocol): that ends it too.
func (c *Client) readLoop() {
	next := wire.Lines(c.nc, 0)
	for line, err := next(); err == nil; line, err = next() {
		var rec received
		if json.Unmarshal(line, &rec) != nil {
			break
		}
		if c.onRecord != nil {
			c.onRecord(rec.record(line))
		}
		if rec.Type == wire.TypeResponse {
			c.mu.Lock()
			ch := c.pending[rec.ID]
			delete(c.pending, rec.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- rec
			}
		}
	}
	c.mu.Lock()
	for _, ch := range c.pending {
		close(ch)
	}
	c.pending = nil
	c.mu.Unlock()
	_ = c.nc.Close()
	close(c.done)
}

// Done is closed once the connection has ended (the host closed it, it
// broke, or Close was called) and every record was delivered.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close closes the connection and waits for the reader to end. It returns
// the error of closing the socket (net.ErrClosed when it already was);
// calls still waiting return ErrClosed.
func (c *Client) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}

// call sends cmd with a fresh id and waits for its response.
func (c *Client) call(ctx context.Context, cmd wire.Command) (received, error) {
	ch := make(chan received, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return received{}, ErrClosed
	}
	c.next++
	cmd.ID = "c" + strconv.FormatUint(c.next, 10)
	c.pending[cmd.ID] = ch
	c.mu.Unlock()
	defer func() { // a response that came has already gone
		c.mu.Lock()
		delete(c.pending, cmd.ID)
		c.mu.Unlock()
	}()
	c.wmu.Lock()
	_, err := c.nc.Write(wire.MustLine(cmd)) // strings only: it encodes
	c.wmu.Unlock()
	if err != nil {
		return received{}, baton.Errorf(ErrClosed, "write: %v", err)
	}
	select {
	case rec, ok := <-ch:
		if !ok {
			return received{}, ErrClosed
		}
		if !rec.Success {
			return rec, remoteErr(rec)
		}
		return rec, nil
	case <-ctx.Done():
		return received{}, ctx.Err()
	}
}

// callData calls cmd and decodes the data of its response into a T.
func callData[T any](ctx context.Context, c *Client, cmd wire.Command) (T, error) {
	var v T
	rec, err := c.call(ctx, cmd)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		return v, baton.Errorf(errRemote, "decode %s data: %v", cmd.Type, err)
	}
	return v, nil
}

// Info calls get_protocol_info.
func (c *Client) Info(ctx context.Context) (Info, error) {
	return callData[Info](ctx, c, wire.Command{Type: wire.CmdGetProtocolInfo})
}

// Open calls open_session for path (and cwd, if not empty) and returns
// the session's handle on this connection: a new session, or the one
// already open at the same canonical path, now shared. Notably
// ErrPathInUse, ErrDraining, and baton.ErrInvalid for a bad path.
func (c *Client) Open(ctx context.Context, path, cwd string) (string, error) {
	res, err := callData[wire.Opened](ctx, c, wire.Command{Type: wire.CmdOpenSession, SessionPath: path, Cwd: cwd})
	return res.SessionID, err
}

// Prompt calls prompt: it returns once the session accepted the prompt
// (or queued it), not when the turn ends. Notably ErrSessionClosed, and
// baton.ErrNotFound for a handle the connection never got.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) error {
	_, err := c.call(ctx, wire.Command{Type: wire.CmdPrompt, SessionID: sessionID, Text: text})
	return err
}

// Abort calls abort: it ends the session's running turn, if any. Errors
// as Prompt.
func (c *Client) Abort(ctx context.Context, sessionID string) error {
	_, err := c.call(ctx, wire.Command{Type: wire.CmdAbort, SessionID: sessionID})
	return err
}

// State calls get_state. Errors as Prompt.
func (c *Client) State(ctx context.Context, sessionID string) (SessionState, error) {
	return callData[SessionState](ctx, c, wire.Command{Type: wire.CmdGetState, SessionID: sessionID})
}

// CloseSession calls close_session: this connection detaches from the
// session, and the session itself closes (closed true) when it was its
// last attachment, even mid-turn. Errors as Prompt.
func (c *Client) CloseSession(ctx context.Context, sessionID string) (closed bool, err error) {
	res, err := callData[wire.CloseResult](ctx, c, wire.Command{Type: wire.CmdCloseSession, SessionID: sessionID})
	return res.Closed, err
}
