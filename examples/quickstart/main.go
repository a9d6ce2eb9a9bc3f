package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store/badgerstore"
	"github.com/batonhq/baton/transcript"
)

// The engine configurations of the demo: every session starts on small,
// every transfer goes to large.
var (
	small = baton.EngineConfig{Engine: "demo", Model: "demo-small"}
	large = baton.EngineConfig{Engine: "demo", Model: "demo-large"}
)

// Workspace ids; the scripted engine tells the scenarios apart by them.
const (
	reportWS = baton.WorkspaceID("ws-report")
	retryWS  = baton.WorkspaceID("ws-retry")
)

// report is what the source writes in its report-only turn.
const report = `## Objective
Add a --json flag to the report command; keep the text output unchanged.

## Decisions
- Encode with encoding/json and a struct per row (stable field order).

## Verified progress
- cmd/report/json.go written; go test ./cmd/report passes (ran it).

## Next action
Document the flag in README.md.`

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// demo is the running program: one coordinator over one store and one
// scripted engine, shared by both scenarios.
type demo struct {
	w    io.Writer
	root string
	co   *handoff.Coordinator
	eng  *enginetest.Engine
	tl   *timeline
}

// run performs both scenarios and writes what happened to w. It returns the
// first error, or a description of the first result that is not what a
// transfer guarantees.
func run(w io.Writer) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	root, err := os.MkdirTemp("", "baton-quickstart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)

	d := &demo{w: w, root: root, tl: newTimeline()}
	d.eng = enginetest.New(enginetest.Options{ScriptFor: script, Submit: d.submit})
	defer d.eng.Close()
	// The embedded default store, in a directory of its own: no server.
	st, err := badgerstore.Open(filepath.Join(root, "store"), badgerstore.Options{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, st.Close()) }()
	engines := engine.Registry{"demo": d.eng}
	svc, err := session.New(st, engines, session.Options{})
	if err != nil {
		return err
	}
	d.co, err = handoff.New(svc, engines, handoff.WithObserver(d.tl.record))
	if err != nil {
		return err
	}
	// Shutdown stops the targets left running; the engine closes after.
	defer func() { err = errors.Join(err, d.co.Shutdown(context.Background())) }()

	if err := d.transferWithReport(ctx); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return d.rejectedThenRetried(ctx)
}

// submit is the scripted engine's report tool: a report-only turn calls it
// with the credentials its start request carried.
func (d *demo) submit(ctx context.Context, cred engine.ReportCredentials, text string) error {
	return d.co.SubmitReport(ctx, cred.Workspace, cred.Handoff, cred.Token.Reveal(), text)
}

// script decides what each start of the scripted engine does: a report-only
// turn submits the report with its own token; the first target in the
// retry workspace is rejected at readiness; everything else becomes ready
// at once and runs until stopped.
func script(req engine.StartRequest) (enginetest.Script, bool) {
	switch {
	case req.Turn == transcript.ReportOnly:
		return enginetest.Script{Report: report, ReportToken: enginetest.RightToken}, true
	case req.Workspace == retryWS && req.Attempt == 1:
		return enginetest.Script{Ready: enginetest.ReadyReject}, true
	}
	return enginetest.Script{}, true
}

// launches counts the engine's starts in ws.
func (d *demo) launches(ws baton.WorkspaceID) int {
	n := 0
	for _, l := range d.eng.Launches() {
		if l.Req.Workspace == ws {
			n++
		}
	}
	return n
}

// check returns an error naming what when ok is false: the demo stops at
// the first broken guarantee instead of printing a wrong story.
func check(ok bool, what string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("unexpected: "+what, args...)
}
