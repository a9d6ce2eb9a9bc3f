//go:build linux

package exec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/transcript"
)

// A profile for a tiny shell "agent": it reads the native id and readiness
// from text lines, and the transcript records the turn.
func Example() {
	dir, err := os.MkdirTemp("", "exec-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	e, err := exec.New(exec.Options{DataDir: dir, Profile: exec.Profile{
		Name:    "echo-agent",
		Command: "sh",
		Fresh:   []string{"-c", `echo "working on: $0"; echo "session s-42 ready"`, "{prompt}"},
		Output: exec.Output{
			NativeID: []exec.Rule{{Pattern: regexp.MustCompile(`^session (\S+) ready$`)}},
			Ready:    []exec.Rule{{Pattern: regexp.MustCompile(`^session \S+ ready$`)}},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	defer e.Close(ctx)

	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Prompt: "fix the bug", Dir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Ready(ctx))
	<-p.Done()
	fmt.Println("clean exit:", p.Exit().Clean())

	evs, err := e.Transcript(ctx, "s1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev, err := range evs {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind == transcript.Message {
			fmt.Printf("%s: %s\n", ev.Speaker, ev.Text)
		}
	}
	// Output:
	// s-42 <nil>
	// clean exit: true
	// User: fix the bug
	// Agent: working on: fix the bug
	// Agent: session s-42 ready
}

// ReapLaunch after a restart: a launch id recorded before a crash is
// reaped; one whose processes are all gone is not running.
func ExampleEngine_ReapLaunch() {
	dir, err := os.MkdirTemp("", "exec-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	e, err := exec.New(exec.Options{DataDir: dir, Profile: exec.Claude(exec.ClaudeOptions{})})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(e.ReapLaunch(context.Background(), "launch_recorded_before_the_crash"))
	// Output:
	// not-running <nil>
}

// A two-phase start: the child exists (held) when Admit runs, and the agent
// runs only if Admit returns nil. A refused admission kills the held child
// before the agent ran, and Start returns Admit's error.
func ExampleEngine_Start_admit() {
	dir, err := os.MkdirTemp("", "exec-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	e, err := exec.New(exec.Options{DataDir: dir, Profile: exec.Profile{
		Name:    "echo-agent",
		Command: "sh",
		Fresh:   []string{"-c", `echo "session s-7 ready"`},
		Output: exec.Output{
			NativeID: []exec.Rule{{Pattern: regexp.MustCompile(`^session (\S+) ready$`)}},
			Ready:    []exec.Rule{{Pattern: regexp.MustCompile(`^session \S+ ready$`)}},
		},
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	defer e.Close(ctx)

	fenced := errors.New("the reservation was taken meanwhile")
	for _, verdict := range []error{nil, fenced} {
		p, err := e.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "go", LaunchID: "launch-example-admit",
			Admit: func(context.Context) error {
				// baton commits the launch's admission here, under the fence.
				return verdict
			}})
		if err != nil {
			fmt.Println("refused:", err)
			continue
		}
		fmt.Println(p.Ready(ctx))
		<-p.Done()
	}
	// Output:
	// s-7 <nil>
	// refused: the reservation was taken meanwhile
}
