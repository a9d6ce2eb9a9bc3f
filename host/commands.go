package host

import (
	"encoding/json"
	"errors"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/host/internal/wire"
)

// dispatch handles one command line and returns its response line. after,
// when set, must run once the response is queued: it ends the command's
// in-flight hold on its session, so a park that waited for it follows the
// response on the wire.
func (h *Host) dispatch(c *conn, line []byte) (resp []byte, after func()) {
	var cmd wire.Command
	if err := json.Unmarshal(line, &cmd); err != nil {
		return h.responseLine(cmd, nil, baton.Errorf(ErrInvalidCommand, "not a command object: %v", err)), nil
	}
	var data any
	var err error
	var e *entry
	switch cmd.Type {
	case wire.CmdGetProtocolInfo:
		data = h.Info()
	case wire.CmdOpenSession:
		if cmd.SessionPath == "" {
			err = baton.Errorf(ErrInvalidCommand, "sessionPath is required")
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
				err = baton.Errorf(ErrInvalidCommand, "text is required")
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
		err = baton.Errorf(ErrInvalidCommand, "type is required")
	default:
		err = baton.Errorf(ErrInvalidCommand, "unknown type %q", cmd.Type)
	}
	return h.responseLine(cmd, data, err), after
}

// begin looks a handle up on c and holds its session with an in-flight
// request. A handle parked by the handoff answers ErrSessionClosed with the
// terminal record as errorData, never ErrUnknownSession: a session being
// parked or closed is waited for, so the answer follows its terminal record.
func (h *Host) begin(c *conn, sessionID string) (*entry, error) {
	if sessionID == "" {
		return nil, baton.Errorf(ErrInvalidCommand, "sessionId is required")
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
	h.mu.Lock()
	draining := h.draining
	h.mu.Unlock()
	if draining {
		h.tryPark(e)
	}
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
// mid-turn: the client asked) when c was its last attachment.
func (h *Host) closeSession(c *conn, e *entry) (any, error) {
	h.mu.Lock()
	if len(e.conns) > 1 {
		h.detachLocked(e, c)
		h.mu.Unlock()
		return wire.CloseResult{SessionID: e.id}, nil
	}
	h.mu.Unlock()
	if !e.markClosing() {
		return nil, h.waitEnded(c, e)
	}
	h.closeEntry(e, wire.ReasonClientClose)
	return wire.CloseResult{SessionID: e.id, Closed: true}, nil
}

// responseLine encodes the response to cmd. Data a runtime supplied that
// does not encode becomes an internal_error response.
func (h *Host) responseLine(cmd wire.Command, data any, err error) []byte {
	r := wire.Response{ID: cmd.ID, Type: wire.TypeResponse, Command: cmd.Type, Success: err == nil, Data: data}
	if err != nil {
		r.Data = nil
		r.Error = codeOf(err)
		var d *dataError
		if errors.As(err, &d) {
			r.ErrorData = d.data
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
