// Command agent is a stand-in agent CLI for the exec engine's tests: it
// prints JSON lines the way a headless agent does (an init line with a
// native session id, text, a readiness line, an end line) and misbehaves on
// request.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

// replay, when AGENT_REPLAY names a file, stands in for a real CLI: it
// records its arguments (and the content of those that name files) as JSON
// in AGENT_ARGV, prints the file to standard output, AGENT_REPLAY_STDERR's
// file to standard error, and exits with AGENT_REPLAY_EXIT.
func replay(path string) {
	rec := map[string]any{"args": os.Args[1:]}
	files := map[string]string{}
	for _, a := range os.Args[1:] {
		if b, err := os.ReadFile(a); err == nil {
			files[a] = string(b)
		}
	}
	rec["files"] = files
	b, _ := json.Marshal(rec)
	os.WriteFile(os.Getenv("AGENT_ARGV"), b, 0o600)
	out, _ := os.ReadFile(path)
	os.Stdout.Write(out)
	if f := os.Getenv("AGENT_REPLAY_STDERR"); f != "" {
		errb, _ := os.ReadFile(f)
		os.Stderr.Write(errb)
	}
	code := 0
	fmt.Sscan(os.Getenv("AGENT_REPLAY_EXIT"), &code)
	os.Exit(code)
}

// forever blocks until the process is killed (SIGUSR2 ends it cleanly).
func forever() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR2)
	<-c
	os.Exit(0)
}

func main() {
	if f := os.Getenv("AGENT_REPLAY"); f != "" {
		replay(f)
	}
	mode := flag.String("mode", "ready", "ready | reject | exit | exit-clean | hang | missing | grandchild")
	after := flag.String("after", "wait", "after readiness: wait | exit")
	resume := flag.String("resume", "", "native id to resume")
	prompt := flag.String("prompt", "", "the prompt")
	promptFile := flag.String("prompt-file", "", "read the prompt from this file")
	stdin := flag.Bool("stdin", false, "read the prompt from standard input")
	model := flag.String("model", "", "model")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	fork := flag.Bool("fork", false, "fork a grandchild that ignores SIGTERM")
	pidfile := flag.String("pidfile", "", "write 'pid grandchild-pid' here")
	flag.Parse()

	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *mode == "grandchild" {
		signal.Ignore(syscall.SIGTERM)
		forever()
		return
	}
	grand := 0
	if *fork {
		c := exec.Command(os.Args[0], "-mode", "grandchild")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		grand = c.Process.Pid
	}
	if *pidfile != "" {
		os.WriteFile(*pidfile+".tmp", []byte(fmt.Sprintf("%d %d\n", os.Getpid(), grand)), 0o600)
		os.Rename(*pidfile+".tmp", *pidfile)
	}
	text := *prompt
	switch {
	case *promptFile != "":
		b, _ := os.ReadFile(*promptFile)
		text = string(b)
	case *stdin:
		b, _ := io.ReadAll(bufio.NewReader(os.Stdin))
		text = string(b)
	}
	id := "native-" + os.Getenv("BATON_LAUNCH_ID")
	if *resume != "" {
		id = *resume
	}
	switch *mode {
	case "missing":
		fmt.Fprintf(os.Stderr, "No conversation found with session ID: %s\n", *resume)
		os.Exit(1)
	case "exit":
		fmt.Fprintln(os.Stderr, "agent: cannot start")
		os.Exit(3)
	case "hang":
		forever()
		return
	}
	emit(map[string]any{"type": "init", "session_id": id, "model": *model})
	emit(map[string]any{"type": "text", "text": "prompt: " + text})
	switch *mode {
	case "reject":
		emit(map[string]any{"type": "rejected", "error": "no credit"})
		os.Exit(1)
	case "exit-clean":
		emit(map[string]any{"type": "end"})
		return
	}
	emit(map[string]any{"type": "ready"})
	if *after == "exit" {
		emit(map[string]any{"type": "end"})
		return
	}
	forever()
}
