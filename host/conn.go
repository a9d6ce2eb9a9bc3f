package host

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// conn is one client connection: a reader that handles its commands in
// order, and one writer that owns every byte written to it. Every record
// (responses, session events, host_superseded, session_closed) goes
// through the writer's queue as one whole line, so nothing ever splits a
// line and a connection sees records in the order they were queued.
type conn struct {
	h      *Host
	nc     net.Conn
	id     uint64
	ctx    context.Context // canceled when the reader ends or the host closes
	cancel context.CancelFunc
	wake   chan struct{}

	qmu      sync.Mutex
	queue    [][]byte
	handling bool // a command is being handled: its response is owed
	closing  bool // close once the queue is flushed and no response is owed
	dead     bool // the writer has stopped; records are dropped

	// Guarded by Host.mu.
	sessions map[string]*entry
	ended    map[string]wire.Closed
}

// addConn starts serving nc. On a draining host the connection is told at
// once and closed after that record, since it holds nothing.
func (h *Host) addConn(nc net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		_ = nc.Close()
		return
	}
	h.nextConn++
	ctx, cancel := context.WithCancel(h.ctx)
	c := &conn{h: h, nc: nc, id: h.nextConn, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		sessions: map[string]*entry{}, ended: map[string]wire.Closed{}}
	h.conns[c] = struct{}{}
	if h.draining {
		c.enqueue(h.superseded)
		c.closeAfterFlush()
	}
	h.wg.Go(func() {
		var loops sync.WaitGroup
		loops.Go(c.readLoop)
		c.writeLoop()
		loops.Wait()
		h.mu.Lock()
		delete(h.conns, c)
		h.mu.Unlock()
		h.checkDrained()
	})
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// enqueue queues one line. A connection that falls MaxQueuedRecords behind
// is cut off rather than let the host's memory grow without bound.
func (c *conn) enqueue(line []byte) {
	c.qmu.Lock()
	slow := !c.dead && len(c.queue) >= c.h.opts.MaxQueuedRecords
	if slow {
		c.dead, c.queue = true, nil // the writer stops; what is queued is dropped
	} else if !c.dead {
		c.queue = append(c.queue, line)
	}
	c.qmu.Unlock()
	if slow {
		c.h.log.Warn("connection too slow; disconnected", zap.Uint64("conn", c.id))
		_ = c.nc.Close()
	}
	c.signal()
}

// closeAfterFlush closes the connection once every queued record and every
// owed response has been written.
func (c *conn) closeAfterFlush() {
	c.qmu.Lock()
	c.closing = true
	c.qmu.Unlock()
	c.signal()
}

func (c *conn) beginHandling() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if c.closing || c.dead {
		return false
	}
	c.handling = true
	return true
}

func (c *conn) endHandling(resp []byte) {
	c.qmu.Lock()
	if !c.dead {
		c.queue = append(c.queue, resp)
	}
	c.handling = false
	c.qmu.Unlock()
	c.signal()
}

func (c *conn) readLoop() {
	defer c.h.readerDone(c)
	next := wire.Lines(c.nc, c.h.opts.MaxLineBytes)
	line, err := next()
	for ; err == nil && c.beginHandling(); line, err = next() {
		resp, after := c.h.dispatch(c, line)
		c.endHandling(resp)
		if after != nil {
			after()
		}
	}
	if errors.Is(err, wire.ErrLineTooLong) && c.beginHandling() {
		err = baton.Errorf(errInvalidCommand, "line over %d bytes", c.h.opts.MaxLineBytes)
		c.endHandling(c.h.responseLine(wire.Command{}, nil, err))
	}
}

func (c *conn) writeLoop() {
	defer func() { // the writer has stopped: later records are dropped
		c.qmu.Lock()
		c.dead, c.queue = true, nil
		c.qmu.Unlock()
		_ = c.nc.Close()
	}()
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && !c.dead && !(c.closing && !c.handling) {
			c.qmu.Unlock()
			<-c.wake
			c.qmu.Lock()
		}
		if c.dead || len(c.queue) == 0 {
			c.qmu.Unlock()
			return
		}
		batch := net.Buffers(c.queue)
		c.queue = nil
		c.qmu.Unlock()
		// A socket deadline is wall-clock time, whatever clock drives the drain.
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.h.opts.WriteTimeout))
		if _, err := batch.WriteTo(c.nc); err != nil {
			c.h.log.Debug("connection write failed", zap.Uint64("conn", c.id), zap.Error(err))
			return
		}
	}
}

// readerDone detaches a connection whose reader ended (the client left, or
// the host closed it): its sessions stay open for others and for the drain.
func (h *Host) readerDone(c *conn) {
	c.cancel()
	h.mu.Lock()
	for _, e := range c.sessions {
		h.detachLocked(e, c)
	}
	h.mu.Unlock()
	c.closeAfterFlush()
}

// dispatch handles one command line and returns its response line. after,
// when set, must run once the response is queued: it ends the command's
// in-flight hold on its session, so a park that waited for it follows the
// response on the wire.
func (h *Host) dispatch(c *conn, line []byte) (resp []byte, after func()) {
	var cmd wire.Command
	if err := json.Unmarshal(line, &cmd); err != nil {
		return h.responseLine(cmd, nil, baton.Errorf(errInvalidCommand, "not a command object: %v", err)), nil
	}
	var data any
	var err error
	var e *entry
	switch cmd.Type {
	case wire.CmdGetProtocolInfo:
		data = h.Info()
	case wire.CmdOpenSession:
		if cmd.SessionPath == "" {
			err = baton.Errorf(errInvalidCommand, "sessionPath is required")
			break
		}
		data, err = h.open(c.ctx, c, cmd.SessionPath, cmd.Cwd)
	case wire.CmdPrompt, wire.CmdGetState, wire.CmdAbort, wire.CmdCloseSession:
		if e, err = h.begin(c, cmd.SessionID); err != nil {
			break
		}
		after = func() { h.end(e) }
		switch cmd.Type {
		case wire.CmdPrompt:
			if cmd.Text == "" {
				err = baton.Errorf(errInvalidCommand, "text is required")
				break
			}
			data, err = wire.Accepted{SessionID: e.id}, runtimeErr(e.sess.Prompt(c.ctx, cmd.Text))
		case wire.CmdAbort:
			data, err = wire.Accepted{SessionID: e.id}, runtimeErr(e.sess.Abort(c.ctx))
		case wire.CmdGetState:
			data, err = h.state(c, e)
		default:
			data, err = h.closeSession(c, e)
		}
	case "":
		err = baton.Errorf(errInvalidCommand, "type is required")
	default:
		err = baton.Errorf(errInvalidCommand, "unknown type %q", cmd.Type)
	}
	return h.responseLine(cmd, data, err), after
}

// begin looks a handle up on c and holds its session with an in-flight
// request. A handle parked by the handoff answers ErrSessionClosed with the
// terminal record as errorData, never errUnknownSession: a session being
// parked or closed is waited for, so the answer follows its terminal record.
func (h *Host) begin(c *conn, sessionID string) (*entry, error) {
	if sessionID == "" {
		return nil, baton.Errorf(errInvalidCommand, "sessionId is required")
	}
	h.mu.Lock()
	e := c.sessions[sessionID]
	if e == nil {
		defer h.mu.Unlock()
		return nil, h.endedLocked(c, sessionID)
	}
	e.mu.Lock()
	open := e.state == stOpen
	if open {
		e.inflight++
	}
	e.mu.Unlock()
	h.mu.Unlock()
	if !open {
		return nil, h.waitEnded(c, e)
	}
	return e, nil
}

// waitEnded waits until e, which is being parked or closed, is gone, and
// returns what a command for it on c then gets; ErrClosed if c ends first.
func (h *Host) waitEnded(c *conn, e *entry) error {
	select {
	case <-e.gone:
	case <-c.ctx.Done():
		return ErrClosed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.endedLocked(c, e.id)
}

// end releases a command's in-flight hold; on a draining host the session
// may now be parked.
func (h *Host) end(e *entry) {
	e.mu.Lock()
	e.inflight--
	e.mu.Unlock()
	h.tryPark(e)
}

func (h *Host) state(c *conn, e *entry) (any, error) {
	st, err := e.sess.State(c.ctx)
	if err != nil {
		return nil, runtimeErr(err)
	}
	h.mu.Lock()
	out := wire.State{SessionID: e.id, SessionPath: e.path, Attachments: len(e.conns), Draining: h.draining, State: st}
	e.mu.Lock()
	a, known, _ := e.activityLocked()
	out.HostRequests = e.inflight - 1 // this get_state is not another request
	e.mu.Unlock()
	h.mu.Unlock()
	out.Busy = busyForParking(a) || out.HostRequests > 0
	if known {
		act := wire.Activity(a)
		out.Activity = &act
	}
	return out, nil
}

// closeSession detaches c; the session itself closes (client_close, even
// mid-turn: the client asked) when c was its last attachment. Both are
// decided under one lock, so no connection attaches in between.
func (h *Host) closeSession(c *conn, e *entry) (any, error) {
	shared := false
	closed := h.closeOpen(e, wire.ReasonClientClose, func() bool {
		if shared = len(e.conns) > 1; shared {
			h.detachLocked(e, c)
		}
		return !shared
	})
	if !shared && !closed {
		return nil, h.waitEnded(c, e)
	}
	return wire.CloseResult{SessionID: e.id, Closed: closed}, nil
}

// responseLine encodes the response to cmd. Data a runtime supplied that
// does not encode becomes an internal_error response.
func (h *Host) responseLine(cmd wire.Command, data any, err error) []byte {
	r := wire.Response{ID: cmd.ID, Type: wire.TypeResponse, Command: cmd.Type, Success: err == nil, Data: data}
	if err != nil {
		r.Data = nil
		r.Error = codeOf(err)
		if d := ErrorData(err); d != nil {
			r.ErrorData = d
		}
		if r.Error == codeInternal || r.Error == "runtime_error" {
			h.log.Warn("command failed", zap.String("command", cmd.Type), zap.String("id", cmd.ID), zap.Error(err))
		}
	}
	line, merr := wire.MarshalLine(r)
	if merr != nil {
		h.log.Error("response does not encode", zap.String("command", cmd.Type), zap.Error(merr))
		line = wire.MustLine(wire.Response{ID: cmd.ID, Type: wire.TypeResponse, Command: cmd.Type, Error: codeInternal})
	}
	return line
}
