package host_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/batonhq/baton/host"
	"github.com/batonhq/baton/host/hosttest"
)

// A host serves a scripted session on a unix socket, then hands over: the
// client is told, the settled session is parked, the connection closed,
// and Serve returns so the process can exit.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "rh")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	h, err := host.New(hosttest.NewScripted(hosttest.ScriptedOptions{}), host.Options{
		InstanceID: "host_example",
		ClaimDir:   filepath.Join(dir, "claims"),
	})
	if err != nil {
		panic(err)
	}
	sock := filepath.Join(dir, "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		panic(err)
	}
	// The successor will own the public path: never unlink it on close.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln) }()

	events := make(chan host.Record, 16)
	c, err := host.Dial(ctx, sock, func(r host.Record) {
		if r.Type != "response" {
			events <- r
		}
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	id, err := c.Open(ctx, filepath.Join(dir, "a.jsonl"), "")
	if err != nil {
		panic(err)
	}
	if err := c.Prompt(ctx, id, "hello"); err != nil {
		panic(err)
	}
	for r := range events {
		fmt.Println(strings.TrimSpace(r.Type + " " + r.Text))
		if r.Type == "agent_settled" {
			break
		}
	}

	if err := h.Drain("/run/next.sock"); err != nil {
		panic(err)
	}
	for r := range events {
		switch r.Type {
		case "host_superseded":
			fmt.Println(r.Type, r.InstanceID, r.Successor)
		case "session_closed":
			fmt.Println(r.Type, r.Reason, filepath.Base(r.SessionPath))
		}
		if r.Type == "session_closed" {
			break
		}
	}
	<-c.Done()
	fmt.Println("connection closed by the host; Serve returned", <-served)
	// Output:
	// agent_start
	// message hello
	// agent_settled
	// host_superseded host_example /run/next.sock
	// session_closed handoff_parked a.jsonl
	// connection closed by the host; Serve returned <nil>
}
