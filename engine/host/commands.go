package host

import (
	"encoding/json"

	"go.uber.org/zap"

	"github.com/batonhq/baton"
)

// PromptResult is the data of prompt: the turn was accepted (or queued).
type PromptResult struct {
	SessionID string `json:"sessionId"`
}

// CloseResult is the data of close_session. Closed is true when the
// session itself closed (this was its last attachment), false when only
// this connection detached from it.
type CloseResult struct {
	SessionID string `json:"sessionId"`
	Closed    bool   `json:"closed"`
}

// dispatch handles one command line and returns its response line. after,
// when set, must run once the response is queued: it ends the command's
// in-flight hold on its session, so a park that waited for it follows the
// response on the wire.
func (h *Host) dispatch(c *conn, line []byte) (resp []byte, after func()) {
	var cmd Command
	if err := json.Unmarshal(line, &cmd); err != nil {
		return h.responseLine(cmd, nil, baton.Errorf(ErrInvalidCommand, "not a command object: %v", err)), nil
	}
	var data any
	var err error
	switch cmd.Type {
	case CmdGetProtocolInfo:
		data = h.Info()
	case CmdOpenSession:
		if cmd.SessionPath == "" {
			err = baton.Errorf(ErrInvalidCommand, "sessionPath is required")
			break
		}
		data, err = h.open(c.ctx, c, cmd.SessionPath, cmd.Cwd)
	case CmdPrompt, CmdGetState, CmdAbort, CmdCloseSession:
		var e *entry
		e, err = h.begin(c, cmd.SessionID)
		if err != nil {
			break
		}
		after = func() { h.end(e) }
		data, err = h.sessionCommand(c, e, cmd)
	case "":
		err = baton.Errorf(ErrInvalidCommand, "type is required")
	default:
		err = baton.Errorf(ErrInvalidCommand, "unknown type %q", cmd.Type)
	}
	return h.responseLine(cmd, data, err), after
}

// begin looks a handle up and holds its session with an in-flight request.
// A session being parked or closed is waited for, so the answer follows
// its terminal record: a command that races the park never sees
// unknown_session.
func (h *Host) begin(c *conn, sessionID string) (*entry, error) {
	e, err := h.lookup(c, sessionID)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.state == stOpen {
		e.inflight++
		e.mu.Unlock()
		return e, nil
	}
	e.mu.Unlock()
	select {
	case <-e.gone:
	case <-c.ctx.Done():
		return nil, ErrClosed
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return nil, h.endedLocked(c, sessionID)
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

func (h *Host) sessionCommand(c *conn, e *entry, cmd Command) (any, error) {
	switch cmd.Type {
	case CmdPrompt:
		if cmd.Text == "" {
			return nil, baton.Errorf(ErrInvalidCommand, "text is required")
		}
		if err := e.sess.Prompt(c.ctx, cmd.Text); err != nil {
			return nil, runtimeErr(err)
		}
		return PromptResult{SessionID: e.id}, nil
	case CmdAbort:
		if err := e.sess.Abort(c.ctx); err != nil {
			return nil, runtimeErr(err)
		}
		return PromptResult{SessionID: e.id}, nil
	case CmdGetState:
		return h.state(c, e)
	default: // CmdCloseSession
		return h.closeSession(c, e)
	}
}

func (h *Host) state(c *conn, e *entry) (any, error) {
	st, err := e.sess.State(c.ctx)
	if err != nil {
		return nil, runtimeErr(err)
	}
	h.mu.Lock()
	out := SessionState{SessionID: e.id, SessionPath: e.path, Attachments: len(e.conns), Draining: h.draining, State: st}
	e.mu.Lock()
	a, known, _ := e.activityLocked()
	out.HostRequests = e.inflight - 1 // this get_state is not another request
	e.mu.Unlock()
	h.mu.Unlock()
	out.Busy = a.Busy() || out.HostRequests > 0
	if known {
		out.Activity = viewOf(a)
	}
	return out, nil
}

// closeSession detaches c; the session itself closes (client_close, even
// mid-turn: the client asked) when c was its last attachment.
func (h *Host) closeSession(c *conn, e *entry) (any, error) {
	h.mu.Lock()
	if len(e.conns) > 1 {
		delete(e.conns, c)
		delete(c.sessions, e.id)
		e.refreshSubsLocked()
		if (h.draining || h.closed) && len(c.sessions) == 0 {
			c.closeAfterFlush()
		}
		h.mu.Unlock()
		return CloseResult{SessionID: e.id}, nil
	}
	h.mu.Unlock()
	if !e.markClosing() {
		<-e.gone
		h.mu.Lock()
		defer h.mu.Unlock()
		return nil, h.endedLocked(c, e.id)
	}
	h.closeEntry(e, ReasonClientClose)
	return CloseResult{SessionID: e.id, Closed: true}, nil
}

func runtimeErr(err error) error {
	if WireCode(err) == CodeInternal {
		return baton.Errorf(ErrRuntime, "%v", err)
	}
	return err
}

// responseLine encodes the response to cmd. Data a runtime supplied that
// does not encode becomes an internal_error response.
func (h *Host) responseLine(cmd Command, data any, err error) []byte {
	r := Response{ID: cmd.ID, Type: TypeResponse, Command: cmd.Type, Success: err == nil, Data: data}
	if err != nil {
		r.Data = nil
		r.Error = WireCode(err)
		r.ErrorData = errorData(err)
		if r.Error == CodeInternal || r.Error == CodeRuntime {
			h.log.Warn("command failed", zap.String("command", cmd.Type), zap.String("id", cmd.ID), zap.Error(err))
		}
	}
	line, merr := MarshalLine(r)
	if merr != nil {
		h.log.Error("response does not encode", zap.String("command", cmd.Type), zap.Error(merr))
		r = Response{ID: cmd.ID, Type: TypeResponse, Command: cmd.Type, Error: CodeInternal}
		line = mustLine(r)
	}
	return line
}
