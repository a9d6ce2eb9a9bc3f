// Command agent is the stand-in agent CLI of the crash tests: it prints
// JSON lines the way a headless agent does (an init line with a native
// session id, a readiness line), forks a grandchild, and then either runs
// until it is killed (both it and the grandchild ignore SIGTERM, so a stop
// takes the SIGKILL path) or, in a report-only turn, submits a report to
// the host over HTTP and exits. With CRASHTEST_RAN set to a directory, it
// first writes a file there named by its launch id.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	os.Stdout.Write(append(b, '\n'))
}

// forever blocks until the process is killed (SIGUSR2 ends it cleanly).
func forever() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR2)
	<-c
	os.Exit(0)
}

func main() {
	grandchild := flag.Bool("grandchild", false, "run as the grandchild")
	resume := flag.String("resume", "", "native id to resume")
	prompt := flag.String("prompt", "", "the prompt")
	model := flag.String("model", "", "model; \"refuse\" refuses the first turn")
	report := flag.String("report", "", "a report-only turn: the JSON file of its credentials")
	flag.Parse()

	signal.Ignore(syscall.SIGTERM)
	if *grandchild {
		forever()
		return
	}
	if dir := os.Getenv("CRASHTEST_RAN"); dir != "" {
		// Say that the agent of this launch ran, before anything else.
		if err := os.WriteFile(filepath.Join(dir, os.Getenv("BATON_LAUNCH_ID")), []byte(*model), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	c := exec.Command(os.Args[0], "-grandchild")
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	id := "native-" + os.Getenv("BATON_LAUNCH_ID")
	if *resume != "" {
		id = *resume
	}
	emit(map[string]any{"type": "init", "session_id": id, "model": *model})
	emit(map[string]any{"type": "text", "text": "prompt: " + *prompt})
	if *model == "refuse" {
		emit(map[string]any{"type": "rejected", "error": "model refused"})
		os.Exit(1)
	}
	emit(map[string]any{"type": "ready"})
	if *report == "" {
		forever()
		return
	}
	if err := submit(*report); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(3)
	}
	emit(map[string]any{"type": "end"})
}

// submit posts the report with the turn's credentials to the host.
func submit(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cred map[string]string
	if err := json.Unmarshal(b, &cred); err != nil {
		return err
	}
	cred["text"] = "Report: the parser fix is half done; tests in parser_test.go fail."
	body, _ := json.Marshal(cred)
	resp, err := http.Post(cred["url"], "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("report refused: %s", resp.Status)
	}
	return nil
}
