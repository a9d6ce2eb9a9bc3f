package host

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"

	"github.com/batonhq/baton"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// OnRecord, if set, is called for every record the connection
	// receives, responses included, in wire order, from the Client's
	// reader goroutine. It must not block for long and must not call
	// Call (whose answer it would be holding up).
	OnRecord func(Record)
	// MaxLineBytes bounds one received line (DefaultMaxLineBytes if
	// zero).
	MaxLineBytes int
}

// Client speaks the host protocol over one connection: Call sends a
// command and waits for its response, and every record, events included,
// goes to OnRecord in order. It is safe for concurrent use.
type Client struct {
	nc   net.Conn
	opts ClientOptions
	done chan struct{}

	wmu sync.Mutex // serializes writes

	mu      sync.Mutex
	next    uint64
	pending map[string]chan Record
	ended   bool
	err     error
}

// Dial connects to the host socket at path (a unix socket). It returns
// ctx's error, or an ErrClosed error when nothing answers there.
func Dial(ctx context.Context, path string, opts ClientOptions) (*Client, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, baton.Errorf(ErrClosed, "dial %s: %v", path, err)
	}
	return NewClient(nc, opts), nil
}

// NewClient speaks the protocol over nc, which it owns from now on; it
// starts one reader goroutine, which ends when the connection does.
func NewClient(nc net.Conn, opts ClientOptions) *Client {
	c := &Client{nc: nc, opts: opts, done: make(chan struct{}), pending: map[string]chan Record{}}
	go c.readLoop()
	return c
}

func (c *Client) readLoop() {
	lr := NewLineReader(c.nc, c.opts.MaxLineBytes)
	var err error
	for {
		var line []byte
		line, err = lr.Next()
		if err != nil {
			break
		}
		var rec Record
		if err = json.Unmarshal(line, &rec); err != nil {
			err = baton.Errorf(errRemote, "undecodable record: %v", err)
			break
		}
		if c.opts.OnRecord != nil {
			c.opts.OnRecord(rec)
		}
		if rec.Type == TypeResponse {
			c.mu.Lock()
			ch := c.pending[rec.ID]
			delete(c.pending, rec.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- rec
			}
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	c.mu.Lock()
	c.err = err
	c.ended = true
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	_ = c.nc.Close()
	close(c.done)
}

// Done is closed once the connection has ended (the host closed it, or
// Close was called) and every record was delivered.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err reports why the connection ended once Done is closed: nil for an
// orderly close, or the read error.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection and waits for the reader to end. It returns
// the error of closing the socket (net.ErrClosed when it already was);
// Calls still waiting return ErrClosed.
func (c *Client) Close() error {
	err := c.nc.Close()
	<-c.done
	return err
}

// Send writes cmd without waiting for its response (which still reaches
// OnRecord) and returns the id it carries: cmd.ID, or a fresh one. It
// returns an ErrClosed error when the write fails.
func (c *Client) Send(cmd Command) (string, error) {
	if cmd.ID == "" {
		c.mu.Lock()
		c.next++
		cmd.ID = "c" + strconv.FormatUint(c.next, 10)
		c.mu.Unlock()
	}
	return cmd.ID, c.write(cmd)
}

func (c *Client) write(cmd Command) error {
	line, err := MarshalLine(cmd)
	if err != nil {
		return baton.Errorf(ErrInvalidCommand, "%v", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.nc.Write(line); err != nil {
		return baton.Errorf(ErrClosed, "write: %v", err)
	}
	return nil
}

// Call sends cmd (with a fresh id when cmd.ID is empty) and waits for its
// response. It returns the response record and, for a failed response, a
// *RemoteError matching this package's sentinels (errors.Is(err,
// ErrPathInUse)); ErrClosed when the connection ends first; or ctx's
// error. An id already waited on by another Call is refused with
// ErrInvalidCommand.
func (c *Client) Call(ctx context.Context, cmd Command) (Record, error) {
	ch := make(chan Record, 1)
	c.mu.Lock()
	if cmd.ID == "" {
		c.next++
		cmd.ID = "c" + strconv.FormatUint(c.next, 10)
	}
	if c.ended {
		c.mu.Unlock()
		return Record{}, ErrClosed
	}
	if _, dup := c.pending[cmd.ID]; dup {
		c.mu.Unlock()
		return Record{}, baton.Errorf(ErrInvalidCommand, "id %q is already waited on", cmd.ID)
	}
	c.pending[cmd.ID] = ch
	c.mu.Unlock()
	if err := c.write(cmd); err != nil {
		c.forget(cmd.ID)
		return Record{}, err
	}
	select {
	case rec, ok := <-ch:
		if !ok {
			return Record{}, ErrClosed
		}
		return rec, rec.Err()
	case <-ctx.Done():
		c.forget(cmd.ID)
		return Record{}, ctx.Err()
	}
}

func (c *Client) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Info calls get_protocol_info. Errors as Call.
func (c *Client) Info(ctx context.Context) (ProtocolInfo, error) {
	var info ProtocolInfo
	rec, err := c.Call(ctx, Command{Type: CmdGetProtocolInfo})
	if err != nil {
		return info, err
	}
	return info, rec.DecodeData(&info)
}

// Open calls open_session for path (and cwd, if not empty). Errors as
// Call; notably ErrPathInUse (see RemoteError.PathInUse), ErrDraining and
// ErrInvalidPath.
func (c *Client) Open(ctx context.Context, path, cwd string) (OpenResult, error) {
	var res OpenResult
	rec, err := c.Call(ctx, Command{Type: CmdOpenSession, SessionPath: path, Cwd: cwd})
	if err != nil {
		return res, err
	}
	return res, rec.DecodeData(&res)
}

// Prompt calls prompt. Errors as Call; notably ErrUnknownSession and
// ErrSessionClosed.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) error {
	_, err := c.Call(ctx, Command{Type: CmdPrompt, SessionID: sessionID, Text: text})
	return err
}

// State calls get_state. Errors as Prompt.
func (c *Client) State(ctx context.Context, sessionID string) (SessionState, error) {
	var st SessionState
	rec, err := c.Call(ctx, Command{Type: CmdGetState, SessionID: sessionID})
	if err != nil {
		return st, err
	}
	return st, rec.DecodeData(&st)
}
