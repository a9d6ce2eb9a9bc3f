//go:build linux

package exec_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/internal/tlog"
)

// markedPIDs returns the processes whose environment carries launch's
// BATON_LAUNCH_ID entry.
func markedPIDs(t *testing.T, launch baton.LaunchID) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := "BATON_LAUNCH_ID" + "=" + string(launch)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || procStart(pid) == "" {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if kv == want {
				out = append(out, pid)
			}
		}
	}
	return out
}

// TestHeldStart: with StartRequest.Admit the child exists (with its launch
// marker, so a reaper finds it) before Admit is called, but the agent runs
// only after Admit returned nil. A refused admission, a cancelled context
// or a reap while held leave no trace of the agent: its pid file (written
// first thing when the agent runs) never appears.
func TestHeldStart(t *testing.T) {
	errRefused := errors.New("fenced out")
	tests := []struct {
		name string
		// admit runs as StartRequest.Admit after the check that the held
		// child exists and the agent has not run.
		admit     func(ctx context.Context, e *exec.Engine, launch baton.LaunchID, cancel context.CancelFunc) error
		wantErr   error // Start's error
		wantAgent bool  // the agent ran and became ready
	}{
		{"admitted", func(context.Context, *exec.Engine, baton.LaunchID, context.CancelFunc) error { return nil }, nil, true},
		{"refused", func(context.Context, *exec.Engine, baton.LaunchID, context.CancelFunc) error { return errRefused }, errRefused, false},
		{"cancelled", func(ctx context.Context, _ *exec.Engine, _ baton.LaunchID, cancel context.CancelFunc) error {
			cancel()
			return ctx.Err()
		}, context.Canceled, false},
		{"reaped-while-held", func(ctx context.Context, e *exec.Engine, launch baton.LaunchID, _ context.CancelFunc) error {
			if o, err := e.ReapLaunch(ctx, launch); o != engine.Stopped {
				return errors.New("ReapLaunch did not find the held child: " + string(o) + ": " + errString(err))
			}
			return nil // admitted, too late: the child is gone
		}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tctx := testCtx(t)
			ctx, cancel := context.WithCancel(tctx)
			defer cancel()
			pidfile := filepath.Join(t.TempDir(), "agent.pid")
			e := newEngine(t, exec.Options{Profile: agentProfile("-pidfile", pidfile), StopGrace: 50 * time.Millisecond})
			launch := newLaunchID("held")
			var held []int
			calls := 0
			req := engine.StartRequest{Session: "s1", Prompt: "hi", LaunchID: launch, Admit: func(actx context.Context) error {
				calls++
				held = markedPIDs(t, launch)
				if _, err := os.Stat(pidfile); err == nil {
					return errors.New("the agent ran before its admission")
				}
				return tt.admit(actx, e, launch, cancel)
			}}
			p, err := e.Start(ctx, req)
			if calls != 1 {
				t.Fatalf("Admit called %d times, want once", calls)
			}
			if len(held) != 1 {
				t.Fatalf("processes of the launch while held = %v, want one", held)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || p != nil {
					t.Fatalf("Start = %v, %v; want %v", p, err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if tt.wantAgent {
				if _, err := p.Ready(tctx); err != nil {
					t.Fatalf("Ready: %v", err)
				}
				leader, _ := readPIDs(t, tctx, pidfile)
				if leader != held[0] {
					t.Errorf("agent pid %d, want the held child's %d (it replaces itself with the agent)", leader, held[0])
				}
				if o, err := p.Stop(tctx); o != engine.Stopped {
					t.Fatalf("Stop = %s, %v", o, err)
				}
				return
			}
			if p != nil {
				if _, err := p.Ready(tctx); !errors.Is(err, engine.ErrExitedBeforeReady) {
					t.Errorf("Ready = %v; want ErrExitedBeforeReady", err)
				}
				waitDone(t, p)
			}
			if got := markedPIDs(t, launch); len(got) != 0 {
				t.Errorf("processes of the launch left: %v", got)
			}
			if _, err := os.Stat(pidfile); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the agent ran (pid file: %v)", err)
			}
			if tt.wantErr != nil {
				// A refused launch leaves nothing in the transcript.
				if tr, err := tlog.OpenReader(e.TranscriptPath("s1")); err == nil {
					n, err := tr.Len(tctx)
					tr.Close()
					if err != nil || n != 0 {
						t.Errorf("transcript of a refused launch: %d events, %v; want none", n, err)
					}
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
