package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strings"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/store/memstore"
	"github.com/batonhq/baton/transcript"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "continue:", err)
		os.Exit(1)
	}
}

// The two runs of the demo.
const (
	runA = baton.WorkspaceID("fix-flaky-test")
	runB = baton.WorkspaceID("add-verbose-flag")

	taskA   = "Fix the flaky TestQueueDrain in pkg/queue."
	taskB   = "Add a --verbose flag to the CLI."
	promptA = "Please pick up where you left off."
	promptB = "Also document the flag in the README."
)

// transcripts is the host's own record of each run's conversation: what
// the user said and what the agent answered, with notes. The briefing reads
// it; baton never writes to it.
type transcripts map[baton.WorkspaceID][]transcript.Event

func (t transcripts) add(ws baton.WorkspaceID, ev ...transcript.Event) { t[ws] = append(t[ws], ev...) }

// events is the transcript source RunQueued reads a briefing from.
func (t transcripts) events(c store.Continuation) iter.Seq[transcript.Event] {
	return slices.Values(t[c.Workspace])
}

func said(s transcript.Speaker, text string) transcript.Event {
	return transcript.Event{Speaker: s, Kind: transcript.Message, Text: text}
}

// run plays both processes and writes what happens to w.
func run(ctx context.Context, w io.Writer) error {
	st := memstore.New() // survives the "restart": both processes use it
	tr := transcripts{}
	cfg := baton.EngineConfig{Engine: "demo", Model: "demo-1"}

	fmt.Fprintln(w, "process 1")
	if err := process1(ctx, w, st, tr, cfg); err != nil {
		return err
	}
	fmt.Fprintln(w, "process 2 (a new Service over the same store)")
	return process2(ctx, w, st, tr)
}

// process1 starts both runs, loses run A before its session exists, and
// queues both continuations before it exits.
func process1(ctx context.Context, w io.Writer, st store.Store, tr transcripts, cfg baton.EngineConfig) error {
	eng := enginetest.New(enginetest.Options{})
	defer eng.Close()
	svc, err := session.New(st, eng, session.Options{})
	if err != nil {
		return err
	}
	for _, ws := range []baton.WorkspaceID{runA, runB} {
		if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Config: cfg}); err != nil {
			return err
		}
	}

	// Run A: the agent process is killed before the engine confirms its
	// session (the tool restarted while the run waited for its worktree).
	eng.Push(enginetest.Script{Ready: enginetest.ExitBeforeReady, ExitCode: -1, ExitErr: errors.New("signal: killed")})
	tr.add(runA, said(transcript.User, taskA))
	_, err = svc.Start(ctx, session.TurnRequest{Workspace: runA, Prompt: taskA})
	if !errors.Is(err, engine.ErrExitedBeforeReady) {
		return fmt.Errorf("run A: want a start that never became ready, got %v", err)
	}
	fmt.Fprintf(w, "  run A: killed before its session existed (%v)\n", err)
	ending := "The agent process was killed (signal: killed) before its session started: " +
		"the tool restarted while the run was waiting for its worktree."
	if _, err := svc.QueueContinuation(ctx, store.Continuation{Workspace: runA, Task: taskA, Ending: ending, Prompt: promptA}); err != nil {
		return err
	}
	fmt.Fprintf(w, "  run A: continuation queued, ending %q\n", ending)

	// Run B: a normal session with a native id.
	tr.add(runB, said(transcript.User, taskB))
	b, err := svc.Start(ctx, session.TurnRequest{Workspace: runB, Prompt: taskB})
	if err != nil {
		return err
	}
	tr.add(runB, said(transcript.Agent, "Added --verbose; tests pass."))
	fmt.Fprintf(w, "  run B: session ready, native id %s\n", b.NativeID)
	if _, err := svc.QueueContinuation(ctx, store.Continuation{Workspace: runB, Task: taskB, Prompt: promptB}); err != nil {
		return err
	}
	fmt.Fprintln(w, "  run B: continuation queued")

	// The process exits: Close stops the process it launched.
	fmt.Fprintln(w, "  process 1 exits")
	return svc.Close(ctx)
}

// process2 runs the queue after the restart and shows what each engine
// start received.
func process2(ctx context.Context, w io.Writer, st store.Store, tr transcripts) error {
	eng := enginetest.New(enginetest.Options{})
	defer eng.Close()
	svc, err := session.New(st, eng, session.Options{})
	if err != nil {
		return err
	}
	defer func() { _ = svc.Close(ctx) }()

	res, err := svc.RunQueued(ctx, session.Briefing{Events: tr.events}, 0)
	if err != nil {
		return err
	}
	if len(res) != 2 {
		return fmt.Errorf("RunQueued: want both continuations started, got %+v", res)
	}
	for _, qs := range res {
		if qs.Continuation.State != store.ContinuationStarted {
			return fmt.Errorf("continuation of %s: want started, got %s (%s)", qs.Continuation.Workspace, qs.Continuation.State, qs.Continuation.Reason)
		}
		if qs.Err != nil {
			return fmt.Errorf("continuation of %s: %w", qs.Continuation.Workspace, qs.Err)
		}
		r := qs
		req, ok := received(eng, r.Session.ID)
		if !ok {
			return fmt.Errorf("no engine start for session %s", r.Session.ID)
		}
		if !r.Briefed {
			fmt.Fprintf(w, "  %s: resume\n", qs.Continuation.Workspace)
			fmt.Fprintf(w, "    briefing sent: no\n    the engine received (mode %s, native id %s): %q\n", req.Mode, req.NativeID, req.Prompt)
			continue
		}
		fmt.Fprintf(w, "  %s: fresh\n    why: %s\n    briefing sent: yes\n    the engine received (mode %s):\n", qs.Continuation.Workspace, r.Reason, req.Mode)
		for line := range strings.SplitSeq(req.Prompt, "\n") {
			fmt.Fprintln(w, strings.TrimRight("    | "+line, " "))
		}
		// Delivery-only: the transcript records a note and the user's
		// words, never the briefing.
		tr.add(qs.Continuation.Workspace,
			transcript.Event{Kind: transcript.Note, Text: "a fresh session was seeded with a briefing"},
			said(transcript.User, qs.Continuation.Prompt))
	}
	fmt.Fprintln(w, "  run A's transcript now:")
	for _, ev := range tr[runA] {
		who := ev.Kind.String()
		if ev.Kind == transcript.Message {
			who = ev.Speaker.String()
		}
		fmt.Fprintf(w, "    %s: %s\n", who, ev.Text)
	}
	return nil
}

// received returns the last request the engine got for a session.
func received(eng *enginetest.Engine, id baton.SessionID) (engine.StartRequest, bool) {
	ls := eng.Launches()
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].Req.Session == id && !ls[i].Failed {
			return ls[i].Req, true
		}
	}
	return engine.StartRequest{}, false
}
