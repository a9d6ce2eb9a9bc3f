//go:build linux

package exec_test

import (
	"bufio"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
)

// TestReapOrphans SIGKILLs a host program while its launch (a child that
// forks a grandchild, both ignoring SIGTERM) runs; a fresh engine's
// ReapLaunch then finds what is left under the launch id, kills it and
// confirms it gone. With the parent-death signal SIGTERM the child itself
// survives its host as an orphan; with SIGKILL only the grandchild does.
func TestReapOrphans(t *testing.T) {
	for _, deathsig := range []string{"term", "kill"} {
		t.Run(deathsig, func(t *testing.T) {
			ctx := testCtx(t)
			dir := t.TempDir()
			pidfile := filepath.Join(dir, "pids")
			launch := baton.LaunchID("launch-" + deathsig + "-" + filepath.Base(dir))
			host := osexec.Command(bins["host"], "-agent", bins["agent"], "-data", filepath.Join(dir, "data"),
				"-launch", string(launch), "-pidfile", pidfile, "-deathsig", deathsig)
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			host.Stderr = os.Stderr
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
				host.Process.Kill()
				host.Wait()
				t.Fatalf("host said %q, %v; want ready", line, err)
			}
			leader, grand := readPIDs(t, ctx, pidfile)
			starts := map[int]string{leader: procStart(leader), grand: procStart(grand)}
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			host.Wait()
			if procStart(grand) == "" {
				t.Fatal("the grandchild died with the host: nothing to reap")
			}
			if deathsig == "term" && procStart(leader) == "" {
				t.Fatal("the child ignored SIGTERM yet died with the host")
			}
			if deathsig == "kill" {
				// The parent-death signal is delivered asynchronously:
				// poll, bounded.
				for d := time.Millisecond; procStart(leader) != ""; d = min(2*d, 50*time.Millisecond) {
					select {
					case <-ctx.Done():
						t.Fatal("the child outlived its host despite the parent-death signal SIGKILL")
					case <-time.After(d):
					}
				}
			}

			e := newEngine(t, exec.Options{Profile: agentProfile(), StopGrace: 50 * time.Millisecond})
			o, err := e.ReapLaunch(ctx, launch)
			if o != engine.Stopped || err != nil {
				t.Fatalf("ReapLaunch = %s, %v; want stopped", o, err)
			}
			for pid, start := range starts {
				if now := procStart(pid); now != "" && now == start {
					t.Errorf("pid %d of the launch still runs after a confirmed reap", pid)
				}
			}
			if o, err := e.ReapLaunch(ctx, launch); o != engine.NotRunning || err != nil {
				t.Errorf("second ReapLaunch = %s, %v; want not-running", o, err)
			}
		})
	}
}

// TestReapLaunch: ReapLaunch of a live launch of this engine confirms it
// gone (Done closes), an unknown launch is not-running, a blank id fails.
func TestReapLaunch(t *testing.T) {
	ctx := testCtx(t)
	e := newEngine(t, exec.Options{Profile: agentProfile("-fork", "-ignore-term"), StopGrace: 50 * time.Millisecond})
	launch := newLaunchID("reap-live")
	p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi", LaunchID: launch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if o, err := e.ReapLaunch(ctx, launch); o != engine.Stopped || err != nil {
		t.Fatalf("ReapLaunch = %s, %v; want stopped", o, err)
	}
	if x := waitDone(t, p); x.Clean() {
		t.Errorf("Exit = %+v; want the killed child's status", x)
	}
	if o, err := e.ReapLaunch(ctx, newLaunchID("never-launched")); o != engine.NotRunning || err != nil {
		t.Errorf("ReapLaunch(unknown) = %s, %v; want not-running", o, err)
	}
	if o, err := e.ReapLaunch(ctx, ""); o != engine.Failed || err == nil {
		t.Errorf("ReapLaunch(\"\") = %s, %v; want failed", o, err)
	}
}
