package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
)

// How much of the published document is shown: lines, and runes a line.
const (
	docLines = 5
	docWidth = 100
)

// clip shortens s to at most n runes, marking a cut with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// setup creates a workspace rooted in its own directory and starts its
// source session on small (launch 1 of the workspace).
func (d *demo) setup(ctx context.Context, ws baton.WorkspaceID, mission string) (store.Session, error) {
	root := filepath.Join(d.root, string(ws))
	if err := os.Mkdir(root, 0o700); err != nil {
		return store.Session{}, err
	}
	svc := d.co.Sessions()
	if _, err := svc.CreateWorkspace(ctx, store.Workspace{ID: ws, Name: string(ws), Mission: mission, Root: root, Config: small}); err != nil {
		return store.Session{}, err
	}
	return svc.Start(ctx, session.TurnRequest{Workspace: ws, Prompt: mission})
}

// transferWithReport is the ordinary path: stop the source, let it write a
// report, start the target, complete.
func (d *demo) transferWithReport(ctx context.Context) error {
	svc := d.co.Sessions()
	src, err := d.setup(ctx, reportWS, "Add a --json flag to the report command.")
	if err != nil {
		return err
	}
	wk, err := svc.ScheduleWakeup(ctx, store.Wakeup{Workspace: reportWS, Session: src.ID,
		Prompt: "Check CI on the pull request.", At: time.Now().Add(time.Hour).Truncate(time.Second)})
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "1. Transfer with a report (%s: %s -> %s, generateSummary=true)\n", reportWS, small.Model, large.Model)
	h, err := d.co.Create(ctx, handoff.Request{Workspace: reportWS, RequestID: "quickstart-1",
		SourceSession: src.ID, GenerateSummary: true, Target: large})
	if err != nil {
		return err
	}
	if h, err = d.tl.settled(ctx, h.ID, 1); err != nil {
		return err
	}
	fmt.Fprintln(d.w, "  timeline:")
	d.tl.print(d.w, h.ID)
	if err := check(h.State == store.StateCompleted, "transfer %s: %s", h.State, h.Error); err != nil {
		return err
	}

	cur, err := svc.Current(ctx, reportWS)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "  result: %s, attempt %d\n", h.State, h.Attempt)
	fmt.Fprintf(d.w, "    current session is the target: %t (model %s, native id %s)\n", cur.ID == h.TargetSession, cur.Config.Model, cur.NativeID)
	wakeups, err := session.List[store.Wakeup](ctx, svc, reportWS)
	if err != nil {
		return err
	}
	moved := len(wakeups) == 1 && wakeups[0].ID == wk.ID && wakeups[0].Session == h.TargetSession &&
		wakeups[0].Prompt == wk.Prompt && wakeups[0].At.Equal(wk.At)
	fmt.Fprintf(d.w, "    wakeup %q moved to the target, prompt and time unchanged: %t\n", wk.Prompt, moved)
	free := d.co.Sessions().AssertWritable(ctx, reportWS) == nil
	fmt.Fprintf(d.w, "    reservation released: %t\n", free)
	fmt.Fprintf(d.w, "    report stored: %t (%d lines)\n", h.Report != "", strings.Count(h.Report, "\n")+1)
	if err := d.printDocument(h); err != nil {
		return err
	}
	n := d.launches(reportWS)
	fmt.Fprintf(d.w, "    launches: %d (source, its report-only turn, target); at most %d process at once\n", n, d.eng.MaxRunning(reportWS))
	return check(cur.ID == h.TargetSession && moved && free && h.Report != "" && n == 3,
		"after completion: current %s, wakeup moved %t, reservation free %t, report %t, %d launches", cur.ID, moved, free, h.Report != "", n)
}

// printDocument prints where the target's prompt was published and its
// first lines.
func (d *demo) printDocument(h store.Handoff) error {
	root := filepath.Join(d.root, string(h.Workspace))
	rel, err := filepath.Rel(root, h.ReportPath)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(h.ReportPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "    document: <root>/%s (mode %04o)\n", filepath.ToSlash(rel), fi.Mode().Perm())
	f, err := os.Open(h.ReportPath)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; i < docLines && sc.Scan(); i++ {
		fmt.Fprintf(d.w, "      | %s\n", clip(sc.Text(), docWidth))
	}
	return sc.Err()
}

// rejectedThenRetried is the failure path: the target of attempt 1 is
// rejected, the source is current again, Decide(Retry) completes attempt 2.
func (d *demo) rejectedThenRetried(ctx context.Context) error {
	svc := d.co.Sessions()
	src, err := d.setup(ctx, retryWS, "Fix the flaky TestUpload.")
	if err != nil {
		return err
	}
	fmt.Fprintf(d.w, "2. Target rejected, then retried (%s: %s -> %s, generateSummary=false)\n", retryWS, small.Model, large.Model)
	h, err := d.co.Create(ctx, handoff.Request{Workspace: retryWS, RequestID: "quickstart-2", SourceSession: src.ID, Target: large})
	if err != nil {
		return err
	}
	if h, err = d.tl.settled(ctx, h.ID, 1); err != nil {
		return err
	}
	if err := check(h.State == store.StateFailed, "attempt 1: %s", h.State); err != nil {
		return err
	}
	cur, err := svc.Current(ctx, retryWS)
	if err != nil {
		return err
	}
	busy := d.co.Sessions().AssertWritable(ctx, retryWS) != nil
	fmt.Fprintf(d.w, "  attempt 1: %s: %s\n", h.State, h.Error)
	fmt.Fprintf(d.w, "    source is current again: %t (model %s); workspace still reserved: %t\n", cur.ID == src.ID, cur.Config.Model, busy)
	if err := check(cur.ID == src.ID && busy, "after the failure: current %s, reserved %t", cur.ID, busy); err != nil {
		return err
	}

	if h, err = d.co.Decide(ctx, retryWS, h.ID, handoff.Retry); err != nil {
		return err
	}
	fmt.Fprintf(d.w, "  Decide(retry): %s, attempt %d\n", h.State, h.Attempt)
	if h, err = d.tl.settled(ctx, h.ID, 2); err != nil {
		return err
	}
	fmt.Fprintln(d.w, "  timeline:")
	d.tl.print(d.w, h.ID)
	if cur, err = svc.Current(ctx, retryWS); err != nil {
		return err
	}
	fmt.Fprintf(d.w, "  result: %s, attempt %d\n", h.State, h.Attempt)
	for _, a := range h.History {
		fmt.Fprintf(d.w, "    history: attempt %d %s\n", a.Attempt, a.Outcome)
	}
	fmt.Fprintf(d.w, "    current session is the target: %t (model %s)\n", cur.ID == h.TargetSession, cur.Config.Model)
	n := d.launches(retryWS)
	fmt.Fprintf(d.w, "    launches: %d (source, rejected target, target of attempt 2); at most %d process at once\n", n, d.eng.MaxRunning(retryWS))
	return check(h.State == store.StateCompleted && h.Attempt == 2 && cur.ID == h.TargetSession && n == 3,
		"after the retry: %s attempt %d, current %s, %d launches", h.State, h.Attempt, cur.ID, n)
}
