//go:build linux

package exec_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/recap"
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

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "baton-exec-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, name := range []string{"agent", "host"} {
		out := filepath.Join(dir, name)
		cmd := osexec.Command("go", "build", "-o", out, "./testdata/"+name)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building testdata/%s: %v\n", name, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
		bins[name] = out
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentProfile runs the stand-in agent with extra flags.
func agentProfile(flags ...string) exec.Profile {
	return exec.Profile{
		Name:    "agent",
		Command: bins["agent"],
		Fresh:   append([]string{"-prompt", "{prompt}", "{flags}"}, flags...),
		Resume:  append([]string{"-resume", "{native_id}", "-prompt", "{prompt}", "{flags}"}, flags...),
		Model:   []string{"-model", "{model}"},
		Output: exec.Output{
			Format:         exec.JSON,
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
	e, err := exec.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// testCtx bounds a test's waits.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
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
func events(t *testing.T, e *exec.Engine, sid string) []recap.Event {
	t.Helper()
	tr, err := exec.OpenTranscript(e.TranscriptPath(baton.SessionID(sid)))
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
