package main

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write the browser test's completed-transfer screenshot to screenshot.png (for the README)")

// chromiumPath finds a Chromium binary; without one the browser test is
// skipped, except in CI (CI=true), where it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH (CI=true): install the chromium package")
	}
	t.Skip("no chromium on PATH: install the chromium package to run the browser test")
	return ""
}

// TestBrowser drives the page in a real headless Chromium: it creates a
// workspace, starts a session, sees its context bar once its turn
// reported its usage, hands it off with the dialog and watches
// the transfer reach completed through the event stream; then a fail-ready
// target fails, the retry button is clicked, and it completes; a
// workspace whose engine names no window shows the tokens alone; a
// context-pressure policy set on the page hands a workspace over by
// itself after its second turn, and the transfer, in the transfers' list
// too, says why it started (and the first transfers that they were
// requested). Screenshots
// go to the test's artifact directory (go test -artifacts keeps them).
func TestBrowser(t *testing.T) {
	t.Parallel()
	bin := chromiumPath(t)
	p := startBinary(t, "")

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1100),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browser, cancelBrowser := chromedp.NewContext(allocCtx)
	defer cancelBrowser()
	if err := chromedp.Do(browser); err != nil { // start the browser, no timeout
		t.Fatalf("starting chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()

	shots := t.ArtifactDir()
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		if *updateScreenshot && name == "completed.png" {
			if err := os.WriteFile("screenshot.png", png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			shot("error.png")
			t.Fatalf("%s: %v", what, err)
		}
	}
	until := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			shot("error.png")
			page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("notice").textContent + " | " + document.getElementById("sessions").textContent + " | " + document.getElementById("ws-pressure-shown").textContent + " | " + document.getElementById("transfer").textContent + " | " + document.getElementById("event-log").textContent`))
			t.Fatalf("waiting for %s: %v\npage: %s\nserver log:\n%s", what, err, page, p.logs.String())
		}
	}
	stateIs := func(s string) string {
		return `document.getElementById("handoff-state").textContent === "` + s + `"`
	}
	sawEvent := func(prefix string) string {
		return `[...document.querySelectorAll("#event-log li")].some(li => li.textContent.startsWith("` + prefix + `"))`
	}

	do("open the page", chromedp.Navigate(p.base+"/"), chromedp.WaitVisible(chromedp.ID("new-ws")))
	until("the machine picture", `document.querySelectorAll("#machine svg g.state").length === 8`)
	do("create a workspace",
		chromedp.SetValue(chromedp.ID("new-ws-name"), "browser demo"),
		chromedp.SetValue(chromedp.ID("new-ws-model"), "demo-1"),
		chromedp.Click(chromedp.ID("create-ws")))
	// Clicks land where the page was drawn: wait until it shows the new
	// workspace, drawn at once with its sessions.
	until("the workspace", `document.getElementById("cur-ws-name").textContent === "browser demo"`)
	do("start a session", chromedp.Click(chromedp.ID("start-session")))
	until("a current session", `document.querySelectorAll('#sessions tr[aria-current="true"]').length === 1`)
	// The turn ends by itself and reports its context usage: a bar of
	// used / window.
	until("the context bar", `(() => { const m = document.querySelector('#sessions tr td.usage meter');
		return !!m && m.value === 20000 && m.max === 200000 && m.parentElement.textContent.trim() === "20,000 / 200,000 (10%)"; })()`)

	// A transfer with a report, through the dialog.
	do("hand off",
		chromedp.Click(chromedp.ID("open-handoff")),
		chromedp.WaitVisible(chromedp.ID("handoff-dialog")),
		chromedp.SetValue(chromedp.ID("target-model"), "demo-latest"),
		chromedp.Click(chromedp.ID("start-handoff")))
	until("completed", stateIs("completed"))
	until("the completed event on the stream", sawEvent("handoff: completed"))
	for _, st := range []string{"stopping", "generating", "starting"} {
		until(st+" on the stream", sawEvent("handoff: "+st))
	}
	until("the report", `document.getElementById("report").textContent.includes("# Handoff report")`)
	until("the target as current", `document.querySelectorAll("#sessions tr").length === 2 && document.querySelector('#sessions tr[aria-current="true"]') === document.querySelectorAll("#sessions tr")[1]`)
	until("the model the target really ran", `document.querySelectorAll("#sessions tr")[1].children[1].textContent === "demo-2 (configured demo-latest) · demo 1.0-demo"`)
	until("the machine highlighting completed", `document.querySelector('#machine g.state.active').dataset.state === "completed"`)
	until("a transfer asked for", `document.getElementById("handoff-why").textContent === "requested" && document.querySelector("#handoffs td.why").textContent === "requested"`)
	shot("completed.png")

	// A target that fails, then retry.
	do("hand off to fail-ready",
		chromedp.Click(chromedp.ID("open-handoff")),
		chromedp.WaitVisible(chromedp.ID("handoff-dialog")),
		chromedp.SetValue(chromedp.ID("target-model"), "fail-ready"),
		chromedp.Click(chromedp.ID("start-handoff")))
	until("failed", stateIs("failed"))
	until("the error shown", `!document.getElementById("handoff-error").hidden && document.getElementById("handoff-error").textContent.length > 0`)
	until("the retry button", `!document.getElementById("decision").hidden && !document.getElementById("btn-retry").hidden`)
	shot("failed.png")
	do("retry", chromedp.Click(chromedp.ID("btn-retry")))
	until("completed after retry", stateIs("completed")+` && document.getElementById("handoff-attempt").textContent === "2"`)
	shot("retried.png")

	// The queue: a message while a turn runs is listed with its state.
	do("send a message", chromedp.SetValue(chromedp.ID("message-text"), "also update the docs"), chromedp.Click(chromedp.ID("send-message")))
	until("the instruction listed", `[...document.querySelectorAll("#instructions tr")].some(tr => tr.textContent.includes("also update the docs"))`)
	shot("instructions.png")
	// An engine that reports the tokens but not the window: just the
	// numbers, no bar.
	do("create a workspace whose engine names no window",
		chromedp.SetValue(chromedp.ID("new-ws-name"), "no window"),
		chromedp.SetValue(chromedp.ID("new-ws-model"), "no-window"),
		chromedp.Click(chromedp.ID("create-ws")))
	// Selected, down to its (empty) transfer panel: the old workspace's
	// report shrinking away moves the page under a click.
	until("the new workspace", `document.getElementById("cur-ws-name").textContent === "no window" && !document.getElementById("no-transfer").hidden`)
	do("start its session", chromedp.Click(chromedp.ID("start-session")))
	until("the context without a window", `(() => { const td = document.querySelector('#sessions tr td.usage');
		return !!td && !td.querySelector("meter") && td.textContent === "20,000 tokens"; })()`)
	// A context-pressure policy set on the page: a demo turn adds 10% of
	// the window, so at 15% the second turn hands over by itself, with a
	// report, and the transfer says why it started.
	do("create a workspace with a policy",
		chromedp.SetValue(chromedp.ID("new-ws-name"), "pressure"),
		chromedp.SetValue(chromedp.ID("new-ws-model"), "demo-1"),
		chromedp.Click(chromedp.ID("create-ws")))
	until("the new workspace, its policy off", `document.getElementById("cur-ws-name").textContent === "pressure" && document.getElementById("ws-pressure-shown").textContent === "off" && !document.getElementById("no-transfer").hidden`)
	do("set the policy",
		chromedp.SetValue(chromedp.ID("ws-pressure"), "15"),
		chromedp.Click(chromedp.ID("ws-pressure-report")),
		chromedp.Click(chromedp.ID("set-pressure")))
	until("the policy shown", `document.getElementById("ws-pressure-shown").textContent === "on: at 15% of the window, with a report first, to the same configuration"`)
	do("start its session", chromedp.Click(chromedp.ID("start-session")))
	until("the first turn's context", `(() => { const td = document.querySelector('#sessions tr td.usage');
		return !!td && td.textContent.trim() === "20,000 / 200,000 (10%)" && td.querySelector("meter").high === 30000; })()`)
	do("a second turn", chromedp.Click(chromedp.ID("start-session")))
	until("the transfer it started, completed", stateIs("completed")+` && document.querySelectorAll("#sessions tr").length === 2`)
	until("why it started", `document.getElementById("handoff-why").textContent === "context pressure: 40,000 / 200,000 tokens ≥ 15%"`)
	until("why, in the transfers' list", `(() => { const rows = document.querySelectorAll("#handoffs tr");
		return rows.length === 1 && rows[0].querySelector("td.why").textContent === "context pressure: 40,000 / 200,000 tokens ≥ 15%"; })()`)
	until("its report", `document.getElementById("report").textContent.includes("# Handoff report")`)
	shot("pressure.png")

	got, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("notice")))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(got) != "" {
		t.Errorf("the page reported an error: %q", got)
	}
	// A store that can no longer persist: the page says why.
	until("no health notice while ready", `document.getElementById("health").hidden`)
	if err := os.RemoveAll(filepath.Join(p.data, "store")); err != nil {
		t.Fatal(err)
	}
	until("the health notice", `!document.getElementById("health").hidden && document.getElementById("health").textContent.includes("directory is gone")`)
	shot("unhealthy.png")
	t.Logf("screenshots in %s", shots)
}
