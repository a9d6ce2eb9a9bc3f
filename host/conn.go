package host

import (
	"context"
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
		c.enqueue(h.supersededLineLocked())
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
		c.killLocked()
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

// killLocked stops the writer and drops what is queued; conn.qmu held.
func (c *conn) killLocked() {
	c.dead = true
	c.queue = nil
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
	lr := wire.NewLineReader(c.nc, c.h.opts.MaxLineBytes)
	for {
		line, err := lr.Next()
		if err != nil {
			if errors.Is(err, wire.ErrLineTooLong) && c.beginHandling() {
				err = baton.Errorf(ErrInvalidCommand, "line over %d bytes", c.h.opts.MaxLineBytes)
				c.endHandling(c.h.responseLine(wire.Command{}, nil, err))
			}
			return
		}
		if !c.beginHandling() {
			return
		}
		resp, after := c.h.dispatch(c, line)
		c.endHandling(resp)
		if after != nil {
			after()
		}
	}
}

func (c *conn) writeLoop() {
	defer func() { _ = c.nc.Close() }()
	for {
		c.qmu.Lock()
		for len(c.queue) == 0 && !c.dead && !(c.closing && !c.handling) {
			c.qmu.Unlock()
			<-c.wake
			c.qmu.Lock()
		}
		if c.dead || len(c.queue) == 0 {
			c.killLocked()
			c.qmu.Unlock()
			return
		}
		batch := net.Buffers(c.queue)
		c.queue = nil
		c.qmu.Unlock()
		// A socket deadline is wall-clock time, whatever clock drives the drain.
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.h.opts.WriteTimeout))
		if _, err := batch.WriteTo(c.nc); err != nil {
			c.qmu.Lock()
			c.killLocked()
			c.qmu.Unlock()
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
