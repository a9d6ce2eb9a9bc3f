//go:build linux

package exec_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// newLaunchID returns a launch id unique to this run: launch ids are unique
// in baton (the engine reaps by them), and two test processes may run at
// once.
func newLaunchID(prefix string) baton.LaunchID {
	var b [8]byte
	rand.Read(b[:])
	return baton.LaunchID(prefix + "-" + hex.EncodeToString(b[:]))
}

// bins holds the test programs TestMain builds: "agent" and "host".
var bins = map[string]string{}

func TestMain(m *testing.M) { clitest.Main(m, bins, "agent", "host") }

// agentProfile runs the stand-in agent with extra flags.
func agentProfile(flags ...string) exec.Profile {
	return exec.Profile{
		Name:    "agent",
		Command: bins["agent"],
		Fresh:   append([]string{"-prompt", "{prompt}", "{flags}"}, flags...),
		Resume:  append([]string{"-resume", "{native_id}", "-prompt", "{prompt}", "{flags}"}, flags...),
		Model:   []string{"-model", "{model}"},
		Output: exec.Output{
			JSON:           true,
			NativeID:       []exec.Rule{{Fields: map[string]string{"type": "init"}, ID: "session_id"}},
			Ready:          []exec.Rule{{Fields: map[string]string{"type": "ready"}}},
			Reject:         []exec.Rule{{Fields: map[string]string{"type": "rejected"}}},
			TurnEnd:        []exec.Rule{{Fields: map[string]string{"type": "end"}}},
			SessionMissing: regexp.MustCompile(`No conversation found`),
		},
	}
}

// newEngine builds an engine on a fresh data directory and closes it at the
// end of the test.
func newEngine(t *testing.T, opts exec.Options) *exec.Engine {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 2 * time.Second
	}
	return clitest.NewEngine(t, opts)
}

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	return clitest.Ctx(t, 2*time.Minute)
}

func waitDone(t *testing.T, p engine.Process) engine.ExitStatus {
	t.Helper()
	select {
	case <-p.Done():
		return p.Exit()
	case <-time.After(30 * time.Second):
		t.Fatal("the process did not end")
	}
	return engine.ExitStatus{}
}

// procStart returns the start time of pid from /proc, "" when it no longer
// runs code (missing, or a zombie).
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if f[0] == "Z" || f[0] == "X" {
		return ""
	}
	return f[19]
}

// readPIDs waits for the stand-in agent's pid file.
func readPIDs(t *testing.T, ctx context.Context, path string) (leader, grand int) {
	t.Helper()
	for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil {
			if _, err := fmt.Sscan(string(b), &leader, &grand); err == nil {
				return leader, grand
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pid file at %s", path)
		case <-time.After(d):
		}
	}
}

// events reads a session's whole transcript.
func events(t *testing.T, e *exec.Engine, sid string) []transcript.Event {
	t.Helper()
	tr, err := tlog.OpenReader(e.TranscriptPath(baton.SessionID(sid)))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	n, err := tr.Len(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := tr.Events(ctx, 0, int(n))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// cliStart starts req in session s1 of workspace ws, in dir.
func cliStart(t *testing.T, ctx context.Context, e *exec.Engine, dir string, req engine.StartRequest) engine.Process {
	t.Helper()
	req.Workspace, req.Session, req.Dir = "ws", "s1", dir
	p, err := e.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cliTurn runs req as cliStart does, waits for it to reach ready and to
// end cleanly, and returns its native id.
func cliTurn(t *testing.T, ctx context.Context, e *exec.Engine, dir string, req engine.StartRequest) string {
	t.Helper()
	p := cliStart(t, ctx, e, dir, req)
	id, err := p.Ready(ctx)
	if err != nil {
		t.Fatalf("Ready: %v (exit %+v)", err, waitDone(t, p))
	}
	if x := waitDone(t, p); !x.Clean() {
		t.Fatalf("Exit = %+v", x)
	}
	return id
}

// agentReplies returns the texts of the agent's messages in a session's
// transcript.
func agentReplies(t *testing.T, e *exec.Engine, sid string) []string {
	t.Helper()
	var replies []string
	for _, ev := range events(t, e, sid) {
		if ev.Speaker == transcript.Agent && ev.Kind == transcript.Message {
			replies = append(replies, ev.Text)
		}
	}
	return replies
}

// stopMidTurn checks a confirmed stop of p, launched as launch, once held
// says the API holds its turn: p never reaches ready, its exit says
// stopped, and the launch is not running any more.
func stopMidTurn(t *testing.T, ctx context.Context, e *exec.Engine, p engine.Process, held <-chan struct{}, launch baton.LaunchID) {
	t.Helper()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatalf("the CLI never reached the API (exit %+v)", p.Exit())
	}
	t0 := time.Now()
	if o, err := p.Stop(ctx); o != engine.Stopped || err != nil {
		t.Fatalf("Stop mid-turn = %s, %v; want stopped", o, err)
	}
	t.Logf("confirmed stop mid-turn in %s (exit %+v)", time.Since(t0), p.Exit())
	if _, err := p.Ready(ctx); !errors.Is(err, engine.ErrExitedBeforeReady) {
		t.Errorf("Ready after a stop mid-turn = %v; want ErrExitedBeforeReady", err)
	}
	if x := p.Exit(); !x.Stopped {
		t.Errorf("Exit = %+v; want stopped", x)
	}
	if o, err := e.ReapLaunch(ctx, launch); o != engine.NotRunning || err != nil {
		t.Errorf("after the stop, ReapLaunch = %s, %v; want not-running", o, err)
	}
}

// cliEngine builds the engine of an end-to-end test of a real CLI: prof
// run with the environment env gives for an isolated home, on a fresh
// data directory. It returns the engine and the turns' working directory.
func cliEngine(t *testing.T, prof exec.Profile, env func(home string) []string) (*exec.Engine, string) {
	t.Helper()
	root := t.TempDir()
	work := clitest.Dir(t, root, "work")
	e := newEngine(t, exec.Options{Profile: prof, DataDir: filepath.Join(root, "data"), Env: env(clitest.Dir(t, root, "home"))})
	return e, work
}

// reportMCP is a launch hook that gives a report-only turn an MCP server
// at url with the turn's credentials in its headers, as package agent's
// wiring does: the configuration in a launch file, and the report tool in
// --allowedTools. Other turns get nothing.
func reportMCP(url string) func(context.Context, engine.StartRequest) (exec.Extra, error) {
	return func(_ context.Context, req engine.StartRequest) (exec.Extra, error) {
		if req.Turn != transcript.ReportOnly || req.Report == nil {
			return exec.Extra{}, nil
		}
		cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"baton": map[string]any{
			"type": "http", "url": url,
			"headers": map[string]string{"X-Baton-Token": req.Report.Token.Reveal(), "X-Baton-Handoff": string(req.Report.Handoff)},
		}}})
		return exec.Extra{
			Files: map[string][]byte{"mcp.json": cfg},
			Flags: []string{"--mcp-config", "{file:mcp.json}", "--strict-mcp-config", "--allowedTools", "mcp__baton__submit_session_handoff"},
		}, err
	}
}
