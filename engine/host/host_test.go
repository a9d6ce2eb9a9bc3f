package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/batonhq/baton/engine/host"
	"github.com/batonhq/baton/engine/host/hosttest"
)

func TestCommands(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{InstanceID: "host_cmds", Generation: 2})
	w := hosttest.Dial(t, s.Socket)

	var info host.ProtocolInfo
	if err := w.MustCall(host.Command{Type: host.CmdGetProtocolInfo}).DecodeData(&info); err != nil {
		t.Fatal(err)
	}
	want := host.ProtocolInfo{InstanceID: "host_cmds", Generation: 2, PID: os.Getpid(), Capabilities: []string{host.CapMultiSession, host.CapGenerationHandoff}}
	if d := cmp.Diff(want, info); d != "" {
		t.Errorf("get_protocol_info (-want +got):\n%s", d)
	}

	if err := os.Symlink(s.Dir, filepath.Join(s.Dir, "alias")); err != nil {
		t.Fatal(err)
	}
	path := s.File("a.jsonl")
	var first, second host.OpenResult
	if err := w.MustCall(host.Command{Type: host.CmdOpenSession, SessionPath: filepath.Join(s.Dir, "alias", "a.jsonl"), Cwd: s.Dir}).DecodeData(&first); err != nil {
		t.Fatal(err)
	}
	if first.SessionPath != path || first.Attached {
		t.Errorf("first open = %+v, want canonical %s and attached false", first, path)
	}
	other := hosttest.Dial(t, s.Socket)
	if err := other.MustCall(host.Command{Type: host.CmdOpenSession, SessionPath: path}).DecodeData(&second); err != nil {
		t.Fatal(err)
	}
	if second.SessionID != first.SessionID || !second.Attached {
		t.Errorf("second open = %+v, want the same session attached", second)
	}

	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: first.SessionID, Text: "hello"})
	for _, c := range []*hosttest.Conn{w, other} {
		c.WaitFor("message", func(r host.Record) bool { return r.Type == host.EventMessage && r.Text == "hello" })
		c.WaitFor("agent_settled", hosttest.IsEvent(host.EventAgentSettled, first.SessionID))
	}
	st := w.State(first.SessionID)
	if st.Attachments != 2 || st.Busy || st.Activity == nil || st.HostRequests != 0 {
		t.Errorf("get_state = %+v", st)
	}

	failures := []struct {
		name string
		cmd  host.Command
		want error
	}{
		{"relative path", host.Command{Type: host.CmdOpenSession, SessionPath: "a.jsonl"}, host.ErrInvalidPath},
		{"relative cwd", host.Command{Type: host.CmdOpenSession, SessionPath: path, Cwd: "w"}, host.ErrInvalidPath},
		{"missing path", host.Command{Type: host.CmdOpenSession}, host.ErrInvalidCommand},
		{"unknown handle", host.Command{Type: host.CmdPrompt, SessionID: "ses_nope", Text: "x"}, host.ErrUnknownSession},
		{"another connection's handle is unknown here", host.Command{Type: host.CmdGetState, SessionID: "ses_nope"}, host.ErrUnknownSession},
		{"missing handle", host.Command{Type: host.CmdAbort}, host.ErrInvalidCommand},
		{"empty prompt", host.Command{Type: host.CmdPrompt, SessionID: first.SessionID}, host.ErrInvalidCommand},
		{"unknown type", host.Command{Type: "dance"}, host.ErrInvalidCommand},
		{"no type", host.Command{}, host.ErrInvalidCommand},
		{"a directory is no session file", host.Command{Type: host.CmdOpenSession, SessionPath: s.Dir}, host.ErrRuntime},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			rec, err := w.Call(f.cmd)
			if !errors.Is(err, f.want) || rec.Success {
				t.Fatalf("%s = %+v, %v; want %v", f.cmd.Type, rec, err, f.want)
			}
		})
	}

	// close_session detaches; the last one closes the session.
	var cr host.CloseResult
	if err := other.MustCall(host.Command{Type: host.CmdCloseSession, SessionID: first.SessionID}).DecodeData(&cr); err != nil || cr.Closed {
		t.Fatalf("first close_session = %+v, %v; want detached only", cr, err)
	}
	if err := w.MustCall(host.Command{Type: host.CmdCloseSession, SessionID: first.SessionID}).DecodeData(&cr); err != nil || !cr.Closed {
		t.Fatalf("last close_session = %+v, %v; want closed", cr, err)
	}
	w.WaitFor("session_closed", func(r host.Record) bool {
		return r.Type == host.EventSessionClosed && r.Reason == host.ReasonClientClose
	})
	if len(s.Host.Holding()) != 0 {
		t.Errorf("still holding %+v", s.Host.Holding())
	}
	// Reopen: the file kept its turns.
	id := w.Open(path)
	raw := w.State(id).State
	if m, ok := raw.(map[string]any); !ok || m["turns"] != float64(1) {
		t.Errorf("reopened state = %#v, want 1 turn", raw)
	}
}

func TestPathInUseWhileAnotherHostHoldsIt(t *testing.T) {
	t.Parallel()
	a := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{InstanceID: "host_a"})
	b := hosttest.Serve(t, host.NewScripted(host.ScriptedOptions{}), host.Options{InstanceID: "host_b", ClaimDir: a.ClaimDir})
	path := a.File("shared.jsonl")
	hosttest.Dial(t, a.Socket).Open(path)
	_, err := hosttest.Dial(t, b.Socket).Call(host.Command{Type: host.CmdOpenSession, SessionPath: path})
	var re *host.RemoteError
	if !errors.Is(err, host.ErrPathInUse) || !errors.As(err, &re) {
		t.Fatalf("open on b = %v, want session_path_in_use", err)
	}
	p, ok := re.PathInUse()
	if !ok || p.Owner.InstanceID != "host_a" || p.Owner.PID != os.Getpid() || p.RetryAfterMS != 2000 {
		t.Errorf("errorData = %+v", p)
	}
}

func TestCloseShutsSessionsDown(t *testing.T) {
	t.Parallel()
	s, w, id := serveAndOpen(t, host.NewScripted(host.ScriptedOptions{}), host.Options{Logger: zap.NewNop()})
	w.MustCall(host.Command{Type: host.CmdPrompt, SessionID: id, Text: "sleep 60000"})
	w.WaitFor("agent_start", hosttest.IsEvent(host.EventAgentStart, id))
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.DefaultTimeout)
	defer cancel()
	if err := s.Host.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w.WaitClosed()
	hosttest.CheckOrder(t, hosttest.Labels(w.Records()), []string{"response:open_session", host.EventAgentStart, "response:prompt",
		host.EventAgentSettled, "session_closed:host_shutdown"})
	if err := s.ServeErr(t); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Serve after Close = %v, want ErrClosed", err)
	}
	if _, err := os.Stat(s.File("a.jsonl")); err != nil {
		t.Error(err)
	}
}
