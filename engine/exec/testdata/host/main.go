// Command host is a minimal host for the exec engine's crash test: it
// starts one launch of the stand-in agent (which forks a grandchild, both
// ignoring SIGTERM), waits until it is ready, prints "ready" and then
// waits to be killed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
)

func main() {
	agent := flag.String("agent", "", "the stand-in agent binary")
	data := flag.String("data", "", "data directory")
	launch := flag.String("launch", "", "launch id")
	pidfile := flag.String("pidfile", "", "where the agent writes its pids")
	deathsig := flag.String("deathsig", "kill", "parent-death signal: kill | term")
	flag.Parse()

	sig := syscall.SIGKILL
	if *deathsig == "term" {
		sig = syscall.SIGTERM
	}
	e, err := exec.New(exec.Options{
		DataDir:     *data,
		DeathSignal: sig,
		Profile: exec.Profile{
			Name:    "agent",
			Command: *agent,
			Fresh:   []string{"-ignore-term", "-fork", "-pidfile", *pidfile, "-prompt", "{prompt}"},
			Output: exec.Output{
				JSON:     true,
				NativeID: []exec.Rule{{Fields: map[string]string{"type": "init"}, ID: "session_id"}},
				Ready:    []exec.Rule{{Fields: map[string]string{"type": "ready"}}},
			},
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	p, err := e.Start(ctx, engine.StartRequest{Workspace: "ws", Session: "s1", Prompt: "work", LaunchID: baton.LaunchID(*launch)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if _, err := p.Ready(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	// Wait to be killed.
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR2)
	<-c
}
