//go:build linux

package acp_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// bins holds the test programs TestMain builds: "agent", the scripted ACP
// agent.
var bins = map[string]string{}

func TestMain(m *testing.M) {
	if dir := os.Getenv(envCrashHost); dir != "" {
		err := crashHost(dir)
		fmt.Println("error", err)
		os.Exit(1)
	}
	clitest.Main(m, bins, "agent")
}

func newLaunchID(prefix string) baton.LaunchID {
	var b [8]byte
	rand.Read(b[:])
	return baton.LaunchID(prefix + "-" + hex.EncodeToString(b[:]))
}

// scripted is an engine on the scripted agent with flags; its sessions
// live in the returned directory.
func scripted(t *testing.T, opts acp.Options, flags ...string) (*acp.Engine, string) {
	t.Helper()
	dir := t.TempDir()
	opts.Command, opts.Args = bins["agent"], flags
	opts.Env = []string{"PATH=" + os.Getenv("PATH"), "ACPAGENT_DIR=" + dir}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 2 * time.Second
	}
	return newEngine(t, opts), dir
}

func newEngine(t testing.TB, opts acp.Options) *acp.Engine {
	t.Helper()
	e, err := acp.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	clitest.Cleanup(t, "acp engine Close", e.Close)
	return e
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	return clitest.Ctx(t, 60*time.Second)
}

// start starts req in session s1 of workspace ws.
func start(t *testing.T, ctx context.Context, e *acp.Engine, req engine.StartRequest) engine.Process {
	t.Helper()
	if req.Workspace == "" {
		req.Workspace = "ws"
	}
	if req.Session == "" {
		req.Session = "s1"
	}
	if req.Turn == "" {
		req.Turn = transcript.Normal
	}
	if req.LaunchID == "" {
		req.LaunchID = newLaunchID("acp")
	}
	if req.Config.Engine == "" {
		req.Config.Engine = "acp"
	}
	p, err := e.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// turn runs req to its end: ready, then a clean exit. It returns the
// native id.
func turn(t *testing.T, ctx context.Context, e *acp.Engine, req engine.StartRequest) string {
	t.Helper()
	t0 := time.Now()
	p := start(t, ctx, e, req)
	id, err := p.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v (exit %+v)", err, waitDone(t, p))
	}
	ready := time.Since(t0)
	if x := waitDone(t, p); !x.Clean() {
		t.Fatalf("Exit = %+v", x)
	}
	t.Logf("turn %q: ready after %s, done after %s", req.Prompt, ready, time.Since(t0))
	return id
}

func waitDone(t *testing.T, p engine.Process) engine.ExitStatus {
	t.Helper()
	select {
	case <-p.Done():
		return p.Exit()
	case <-time.After(60 * time.Second):
		t.Fatal("the process did not end")
	}
	return engine.ExitStatus{}
}

// events reads a session's whole transcript.
func events(t *testing.T, e *acp.Engine, sid baton.SessionID) []transcript.Event {
	t.Helper()
	seq, err := e.Transcript(context.Background(), sid)
	if err != nil {
		t.Fatal(err)
	}
	var out []transcript.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	// The file is package exec's format.
	tr, err := tlog.OpenReader(e.TranscriptPath(sid))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if n, err := tr.Len(context.Background()); err != nil || n != int64(len(out)) {
		t.Fatalf("tlog.OpenReader: %d events, %v; want %d", n, err, len(out))
	}
	return out
}

// replies returns the agent's messages in a session's transcript.
func replies(t *testing.T, e *acp.Engine, sid baton.SessionID) []string {
	t.Helper()
	var out []string
	for _, ev := range events(t, e, sid) {
		if ev.Speaker == transcript.Agent && ev.Kind == transcript.Message {
			out = append(out, ev.Text)
		}
	}
	return out
}

// running reports whether pid still runs code (not missing, not a zombie).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	return f[0] != "Z" && f[0] != "X"
}

// activityOf returns what p says it is doing.
func activityOf(p engine.Process) engine.Activity {
	return p.(interface{ Activity() engine.Activity }).Activity()
}
