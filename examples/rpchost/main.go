package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitReplaced = 3 // socket_replaced: the public entry changed under a successor
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "serve":
		return exitStatus(stderr, runServe(args[1:], stdout, stderr))
	case "client":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return exitStatus(stderr, runClient(ctx, args[1:], stdin, stdout, stderr))
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return exitOK
	}
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage:
  rpchost serve -socket PATH [-grace 10m] [-poll 1s] [-sweep 50ms] [-claims DIR] [-hooks all|activity|settle|none]
  rpchost client -socket PATH -session FILE [-cwd DIR]
`)
}

// errUsage marks a command line that could not be parsed; the flag
// package has already said why.
var errUsage = errors.New("usage")

func exitStatus(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errUsage):
		return exitUsage
	case errors.Is(err, errSocketReplaced):
		fmt.Fprintln(stderr, "rpchost:", err)
		return exitReplaced
	}
	fmt.Fprintln(stderr, "rpchost:", err)
	return exitFailed
}
