//go:build linux

package acp_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/clock"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/acp"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/internal/proc"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/badgerstore"
)

// The crash host is this test binary run again with envCrashHost set to
// its directory: it opens a badger store there, starts the workspace's
// session on the Claude Code adapter (the API holds its turn), says
// "running launch=<id>", and waits to be killed.
const (
	envCrashHost = "BATON_ACP_CRASH_HOST"
	envCrashAPI  = "BATON_ACP_CRASH_API"
)

// crashEngine is the ACP engine the crash host and the recovering test
// build on dir.
func crashEngine(dir, bin, api string) (*acp.Engine, error) {
	return acp.New(acp.Options{Name: acpEngine, Command: bin, Env: append(clitest.ClaudeEnv(filepath.Join(dir, "home"), api), "CRASHTEST_RUN="+dir),
		DataDir: filepath.Join(dir, "acp"), StopGrace: time.Second})
}

func crashCoordinator(dir string, e *acp.Engine) (*handoff.Coordinator, store.Store, error) {
	st, err := badgerstore.Open(filepath.Join(dir, "store"), badgerstore.Options{Small: true})
	if err != nil {
		return nil, nil, err
	}
	reg := engine.Registry{acpEngine: e}
	svc, err := session.New(st, reg, session.Options{})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	co, err := handoff.New(svc, reg)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return co, st, nil
}

// crashHost is the crash host's main.
func crashHost(dir string) error {
	ctx := context.Background()
	e, err := crashEngine(dir, os.Getenv(envClaudeAdapter), os.Getenv(envCrashAPI))
	if err != nil {
		return err
	}
	co, _, err := crashCoordinator(dir, e)
	if err != nil {
		return err
	}
	work := filepath.Join(dir, "work")
	if _, err := co.Sessions().CreateWorkspace(ctx, store.Workspace{ID: "ws", Root: work, Config: baton.EngineConfig{Engine: acpEngine}}); err != nil {
		return err
	}
	if _, err := co.Sessions().Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "HANG"}); err != nil {
		return err
	}
	fmt.Println("running")
	select {}
}

// TestCrashAndRecover SIGKILLs a host in the middle of a turn of the
// Claude Code adapter: the kernel's parent-death signal ends the adapter,
// but the Claude Code process it runs outlives it, an orphan holding the
// turn's request. Recover on the same store then finds the launch by its
// environment entry, kills what runs of it, and says so; nothing of the
// run is left.
func TestCrashAndRecover(t *testing.T) {
	bin := claudeAdapterBin(t)
	hang := clitest.NewGate()
	api := clitest.NewMessages(t, claudeScript(hang))
	dir := t.TempDir()
	clitest.Dir(t, dir, "work")
	clitest.Dir(t, dir, "home")
	ctx := clitest.Ctx(t, 3*time.Minute)
	marker := "CRASHTEST_RUN=" + dir
	t.Cleanup(func() { killMarked(marker) })

	host := osexec.Command(os.Args[0], "-test.run=^$")
	host.Env = append(os.Environ(), envCrashHost+"="+dir, envCrashAPI+"="+api.URL, envClaudeAdapter+"="+bin)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	host.Stderr = os.Stderr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "running" {
		_ = host.Process.Kill()
		t.Fatalf("the crash host said %q", lines.Text())
	}
	select {
	case <-hang.Held():
	case <-ctx.Done():
		_ = host.Process.Kill()
		t.Fatal("the turn never reached its held request")
	}
	if err := host.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	if len(marked(marker)) == 0 {
		t.Fatal("nothing of the killed host outlived it: the test would check nothing")
	}

	e, err := crashEngine(dir, bin, api.URL)
	if err != nil {
		t.Fatal(err)
	}
	clitest.Cleanup(t, "acp engine Close", e.Close)
	co, st, err := crashCoordinator(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec, err := co.Recover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Reaped) != 1 || rec.Reaped[0].Outcome != engine.Stopped || len(rec.Held) != 0 {
		t.Fatalf("Recover = reaped %+v, held %+v; want the one launch killed", rec.Reaped, rec.Held)
	}
	if left := marked(marker); len(left) > 0 {
		t.Errorf("Recover said it killed the launch, and %v still run", left)
	}
	if _, running := co.Sessions().Running("ws"); running {
		t.Error("the workspace still has a running process after Recover")
	}
}

// marked returns the live processes whose environment holds marker.
func marked(marker string) []int {
	found, _ := proc.Scan([]byte(marker), 0, 0)
	var pids []int
	for _, st := range found {
		pids = append(pids, st.PID())
	}
	return pids
}

func killMarked(marker string) {
	_, _ = proc.Reap(context.Background(), clock.Real{}, []byte(marker), 0, 0, 0)
}
