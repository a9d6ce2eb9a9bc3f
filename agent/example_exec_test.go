//go:build linux

package agent_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

// The exec engine under a Coordinator of one's own, without New: a session
// transfer driven by real subprocesses. The source session is a
// shell "agent" that keeps running after its first turn; the transfer stops
// it (a confirmed stop of its process group) and starts the target, whose
// transcript records the handoff prompt it was started with.
func Example_transfer() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "exec-transfer-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	agent := `echo "session $0 ready"; exec sleep 600`
	e, err := exec.New(exec.Options{DataDir: dir, Profile: exec.Profile{
		Name:    "agent",
		Command: "sh",
		Fresh:   []string{"-c", agent, "{session}"},
		Resume:  []string{"-c", agent, "{native_id}"},
		Models:  []string{"small", "large"},
		Output: exec.Output{
			NativeID: []exec.Rule{{Pattern: regexp.MustCompile(`^session (\S+) ready$`)}},
			Ready:    []exec.Rule{{Pattern: regexp.MustCompile(`^session \S+ ready$`)}},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close(ctx)

	st := memstore.New()
	engines := engine.Registry{"agent": e}
	svc, err := session.New(st, engines, session.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	settled := make(chan store.Handoff, 1)
	co, err := handoff.New(svc, engines,
		handoff.WithObserver(func(ev handoff.Event) {
			switch ev.Handoff.State {
			case store.StateCompleted, store.StateFailed, store.StateCancelled, store.StateInterrupted:
				select {
				case settled <- ev.Handoff:
				default:
				}
			}
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer co.Shutdown(ctx) // and so svc

	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: "ws", Root: dir, Mission: "Fix the parser.",
		Config: baton.EngineConfig{Engine: "agent", Model: "small"}}); err != nil {
		fmt.Println(err)
		return
	}
	src, err := svc.Start(ctx, session.TurnRequest{Workspace: "ws", Prompt: "Fix the parser."})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := co.Create(ctx, handoff.Request{Workspace: "ws", RequestID: "req-1", SourceSession: src.ID,
		Target: baton.EngineConfig{Engine: "agent", Model: "large"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	h = <-settled
	cur, err := svc.Current(ctx, "ws")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("settled:", h.State, "stop unconfirmed:", h.StopUnconfirmed)
	fmt.Println("current is the target:", cur.ID == h.TargetSession, "on", cur.Config.Model)

	seq, err := e.Transcript(ctx, h.TargetSession)
	if err != nil {
		fmt.Println(err)
		return
	}
	var evs []transcript.Event
	for ev := range seq {
		if evs = append(evs, ev); len(evs) == 2 {
			break
		}
	}
	fmt.Println("the target was briefed:", len(evs) == 2 && evs[1].Speaker == transcript.User && strings.Contains(evs[1].Text, "Fix the parser."))
	// Output:
	// settled: completed stop unconfirmed: false
	// current is the target: true on large
	// the target was briefed: true
}
