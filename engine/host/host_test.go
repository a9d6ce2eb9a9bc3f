package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
)

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	rt := NewScripted(ScriptedOptions{})
	tests := []struct {
		name string
		rt   Runtime
		opts Options
	}{
		{"nil runtime", nil, Options{}},
		{"negative generation", rt, Options{Generation: -1}},
		{"negative grace", rt, Options{Grace: -1}},
		{"negative sweep", rt, Options{Sweep: -1}},
		{"negative limit", rt, Options{MaxLineBytes: -1}},
		{"bad instance id", rt, Options{InstanceID: "a\x01b"}},
		{"relative claim dir", rt, Options{ClaimDir: "claims"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := New(tt.rt, tt.opts)
			if !errors.Is(err, ErrInvalidOptions) || h != nil {
				t.Fatalf("New = %v, %v; want ErrInvalidOptions", h, err)
			}
		})
	}
	if _, err := os.Stat("claims"); err == nil {
		t.Error("a rejected New created its claim directory")
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	h, err := New(NewScripted(ScriptedOptions{}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.opts.Grace != DefaultGrace || DefaultGrace.Milliseconds() != 600_000 || h.opts.Sweep != DefaultSweep || h.opts.Generation != 1 || h.opts.InstanceID == "" {
		t.Errorf("defaults: %+v", h.opts)
	}
	if err := h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := h.Drain(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Drain after Close = %v, want ErrClosed", err)
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{InstanceID: "host_cmds", Generation: 2})
	w := dial(t, s.sock)

	var info ProtocolInfo
	if err := w.mustCall(Command{Type: CmdGetProtocolInfo}).DecodeData(&info); err != nil {
		t.Fatal(err)
	}
	want := ProtocolInfo{InstanceID: "host_cmds", Generation: 2, PID: os.Getpid(), Capabilities: []string{CapMultiSession, CapGenerationHandoff}}
	if d := cmp.Diff(want, info); d != "" {
		t.Errorf("get_protocol_info (-want +got):\n%s", d)
	}

	if err := os.Symlink(s.dir, filepath.Join(s.dir, "alias")); err != nil {
		t.Fatal(err)
	}
	path := s.file("a.jsonl")
	var first, second OpenResult
	if err := w.mustCall(Command{Type: CmdOpenSession, SessionPath: filepath.Join(s.dir, "alias", "a.jsonl"), Cwd: s.dir}).DecodeData(&first); err != nil {
		t.Fatal(err)
	}
	if first.SessionPath != path || first.Attached {
		t.Errorf("first open = %+v, want canonical %s and attached false", first, path)
	}
	other := dial(t, s.sock)
	if err := other.mustCall(Command{Type: CmdOpenSession, SessionPath: path}).DecodeData(&second); err != nil {
		t.Fatal(err)
	}
	if second.SessionID != first.SessionID || !second.Attached {
		t.Errorf("second open = %+v, want the same session attached", second)
	}

	w.mustCall(Command{Type: CmdPrompt, SessionID: first.SessionID, Text: "hello"})
	for _, c := range []*wire{w, other} {
		c.waitFor("message", func(r Record) bool { return r.Type == EventMessage && r.Text == "hello" })
		c.waitFor("agent_settled", isEvent(EventAgentSettled, first.SessionID))
	}
	st := w.state(first.SessionID)
	if st.Attachments != 2 || st.Busy || st.Activity == nil || st.HostRequests != 0 {
		t.Errorf("get_state = %+v", st)
	}

	failures := []struct {
		name string
		cmd  Command
		want error
	}{
		{"relative path", Command{Type: CmdOpenSession, SessionPath: "a.jsonl"}, ErrInvalidPath},
		{"relative cwd", Command{Type: CmdOpenSession, SessionPath: path, Cwd: "w"}, ErrInvalidPath},
		{"missing path", Command{Type: CmdOpenSession}, ErrInvalidCommand},
		{"unknown handle", Command{Type: CmdPrompt, SessionID: "ses_nope", Text: "x"}, ErrUnknownSession},
		{"another connection's handle is unknown here", Command{Type: CmdGetState, SessionID: "ses_nope"}, ErrUnknownSession},
		{"missing handle", Command{Type: CmdAbort}, ErrInvalidCommand},
		{"empty prompt", Command{Type: CmdPrompt, SessionID: first.SessionID}, ErrInvalidCommand},
		{"unknown type", Command{Type: "dance"}, ErrInvalidCommand},
		{"no type", Command{}, ErrInvalidCommand},
		{"a directory is no session file", Command{Type: CmdOpenSession, SessionPath: s.dir}, ErrRuntime},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			rec, err := w.call(f.cmd)
			if !errors.Is(err, f.want) || rec.Success {
				t.Fatalf("%s = %+v, %v; want %v", f.cmd.Type, rec, err, f.want)
			}
		})
	}

	// close_session detaches; the last one closes the session.
	var cr CloseResult
	if err := other.mustCall(Command{Type: CmdCloseSession, SessionID: first.SessionID}).DecodeData(&cr); err != nil || cr.Closed {
		t.Fatalf("first close_session = %+v, %v; want detached only", cr, err)
	}
	if err := w.mustCall(Command{Type: CmdCloseSession, SessionID: first.SessionID}).DecodeData(&cr); err != nil || !cr.Closed {
		t.Fatalf("last close_session = %+v, %v; want closed", cr, err)
	}
	w.waitFor("session_closed", func(r Record) bool { return r.Type == EventSessionClosed && r.Reason == ReasonClientClose })
	if len(s.h.Holding()) != 0 {
		t.Errorf("still holding %+v", s.h.Holding())
	}
	// Reopen: the file kept its turns.
	id := w.open(path)
	raw := w.state(id).State
	if m, ok := raw.(map[string]any); !ok || m["turns"] != float64(1) {
		t.Errorf("reopened state = %#v, want 1 turn", raw)
	}
}

func TestPathInUseWhileAnotherHostHoldsIt(t *testing.T) {
	t.Parallel()
	a := serveHost(t, NewScripted(ScriptedOptions{}), Options{InstanceID: "host_a"})
	b := serveHost(t, NewScripted(ScriptedOptions{}), Options{InstanceID: "host_b", ClaimDir: filepath.Join(a.dir, "claims")})
	path := a.file("shared.jsonl")
	dial(t, a.sock).open(path)
	_, err := dial(t, b.sock).call(Command{Type: CmdOpenSession, SessionPath: path})
	var re *RemoteError
	if !errors.Is(err, ErrPathInUse) || !errors.As(err, &re) {
		t.Fatalf("open on b = %v, want session_path_in_use", err)
	}
	p, ok := re.PathInUse()
	if !ok || p.Owner.InstanceID != "host_a" || p.Owner.PID != os.Getpid() || p.RetryAfterMS != 2000 {
		t.Errorf("errorData = %+v", p)
	}
}

func TestCloseShutsSessionsDown(t *testing.T) {
	t.Parallel()
	s := serveHost(t, NewScripted(ScriptedOptions{}), Options{Logger: zap.NewNop()})
	w := dial(t, s.sock)
	id := w.open(s.file("a.jsonl"))
	w.mustCall(Command{Type: CmdPrompt, SessionID: id, Text: "sleep 60000"})
	w.waitFor("agent_start", isEvent(EventAgentStart, id))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := s.h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w.waitClosed()
	checkOrder(t, labels(w.records()), []string{"response:open_session", EventAgentStart, "response:prompt",
		EventAgentSettled, "session_closed:host_shutdown"})
	if err := <-s.served; !errors.Is(err, ErrClosed) {
		t.Errorf("Serve after Close = %v, want ErrClosed", err)
	}
	s.served <- nil
	if _, err := os.Stat(s.file("a.jsonl")); err != nil {
		t.Error(err)
	}
}
