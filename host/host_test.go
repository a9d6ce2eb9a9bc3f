package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
	"github.com/batonhq/baton/host/internal/wire"
)

func TestCommands(t *testing.T) {
	t.Parallel()
	s := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{InstanceID: "host_cmds", Generation: 2})
	w := hosttest.Dial(t, s.Socket)

	want := host.Info{InstanceID: "host_cmds", Generation: 2, PID: os.Getpid(), Capabilities: []string{"multi_session", "generation_handoff"}}
	if d := cmp.Diff(want, w.Info()); d != "" {
		t.Errorf("get_protocol_info (-want +got):\n%s", d)
	}

	if err := os.Symlink(s.Dir, filepath.Join(s.Dir, "alias")); err != nil {
		t.Fatal(err)
	}
	path := s.File("a.jsonl")
	first := openRaw(t, w, filepath.Join(s.Dir, "alias", "a.jsonl"), s.Dir)
	if first.SessionPath != path || first.Attached {
		t.Errorf("first open = %+v, want canonical %s and attached false", first, path)
	}
	other := hosttest.Dial(t, s.Socket)
	second := openRaw(t, other, path, "")
	if second.SessionID != first.SessionID || !second.Attached {
		t.Errorf("second open = %+v, want the same session attached", second)
	}

	w.Prompt(first.SessionID, "hello")
	for _, c := range []*hosttest.Conn{w, other} {
		c.WaitFor("message", func(r host.Record) bool { return r.Type == "message" && r.Text == "hello" })
		c.WaitFor("agent_settled", hosttest.IsEvent("agent_settled", first.SessionID))
	}
	st := w.State(first.SessionID)
	if st.Attachments != 2 || st.Busy || st.Activity == nil || st.HostRequests != 0 || st.SessionPath != path {
		t.Errorf("get_state = %+v", st)
	}

	failures := []struct {
		name string
		cmd  wire.Command
		want error
	}{
		{"relative path", wire.Command{Type: wire.CmdOpenSession, SessionPath: "a.jsonl"}, host.ErrInvalidPath},
		{"relative cwd", wire.Command{Type: wire.CmdOpenSession, SessionPath: path, Cwd: "w"}, host.ErrInvalidPath},
		{"missing path", wire.Command{Type: wire.CmdOpenSession}, host.ErrInvalidCommand},
		{"unknown handle", wire.Command{Type: wire.CmdPrompt, SessionID: "ses_nope", Text: "x"}, host.ErrUnknownSession},
		{"another connection's handle is unknown here", wire.Command{Type: wire.CmdGetState, SessionID: "ses_nope"}, host.ErrUnknownSession},
		{"missing handle", wire.Command{Type: wire.CmdAbort}, host.ErrInvalidCommand},
		{"empty prompt", wire.Command{Type: wire.CmdPrompt, SessionID: first.SessionID}, host.ErrInvalidCommand},
		{"unknown type", wire.Command{Type: "dance"}, host.ErrInvalidCommand},
		{"no type", wire.Command{}, host.ErrInvalidCommand},
		{"a directory is no session file", wire.Command{Type: wire.CmdOpenSession, SessionPath: s.Dir}, host.ErrRuntime},
	}
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			rec, err := host.Call(hosttest.Context(t), w.Client(), f.cmd)
			if !errors.Is(err, f.want) || rec.Success {
				t.Fatalf("%s = %+v, %v; want %v", f.cmd.Type, rec, err, f.want)
			}
		})
	}

	// close_session detaches; the last one closes the session.
	if closed, err := other.Client().CloseSession(hosttest.Context(t), first.SessionID); err != nil || closed {
		t.Fatalf("first close_session = %v, %v; want detached only", closed, err)
	}
	if closed, err := w.Client().CloseSession(hosttest.Context(t), first.SessionID); err != nil || !closed {
		t.Fatalf("last close_session = %v, %v; want closed", closed, err)
	}
	w.WaitFor("session_closed", func(r host.Record) bool {
		return r.Type == "session_closed" && r.Reason == "client_close"
	})
	if r, o := s.Host.Tracked(); r != 0 || o != 0 {
		t.Errorf("still tracking %d reserved paths and %d open sessions: %+v", r, o, s.Host.Holding())
	}
	// Reopen: the file kept its turns.
	id := w.Open(path)
	raw := w.State(id).State
	if m, ok := raw.(map[string]any); !ok || m["turns"] != float64(1) {
		t.Errorf("reopened state = %#v, want 1 turn", raw)
	}
}

// openRaw opens path on w and returns the whole open_session data.
func openRaw(t *testing.T, w *hosttest.Conn, path, cwd string) wire.Opened {
	t.Helper()
	rec, err := host.Call(hosttest.Context(t), w.Client(), wire.Command{Type: wire.CmdOpenSession, SessionPath: path, Cwd: cwd})
	var res wire.Opened
	if err == nil {
		err = json.Unmarshal(rec.Data, &res)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPathInUseWhileAnotherHostHoldsIt(t *testing.T) {
	t.Parallel()
	a := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{InstanceID: "host_a"})
	b := hosttest.Serve(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{InstanceID: "host_b", ClaimDir: a.ClaimDir})
	path := a.File("shared.jsonl")
	hosttest.Dial(t, a.Socket).Open(path)
	_, err := hosttest.Dial(t, b.Socket).Client().Open(hosttest.Context(t), path, "")
	p, ok := hosttest.PathInUse(err)
	if !ok || p.InstanceID != "host_a" || p.PID != os.Getpid() || p.RetryAfterMS != 2000 {
		t.Errorf("open on b = %v, holder %+v; want session_path_in_use naming host_a", err, p)
	}
}

func TestCloseShutsSessionsDown(t *testing.T) {
	t.Parallel()
	s, w, id := serveAndOpen(t, hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{Logger: zap.NewNop()})
	w.Prompt(id, "sleep 60000")
	w.WaitFor("agent_start", hosttest.IsEvent("agent_start", id))
	ctx, cancel := context.WithTimeout(context.Background(), hosttest.DefaultTimeout)
	defer cancel()
	if err := s.Host.Close(ctx); err != nil {
		t.Fatal(err)
	}
	w.WaitClosed()
	if r, o := s.Host.Tracked(); r != 0 || o != 0 {
		t.Errorf("still tracking %d reserved paths and %d open sessions after Close", r, o)
	}
	hosttest.CheckOrder(t, hosttest.Labels(w.Records()), []string{"response:open_session", "agent_start", "response:prompt",
		"agent_settled", "session_closed:host_shutdown"})
	if err := s.ServeErr(t); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Serve after Close = %v, want ErrClosed", err)
	}
	if _, err := os.Stat(s.File("a.jsonl")); err != nil {
		t.Error(err)
	}
}
