package handofftest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// edit is one change a mutation makes to a source file of the module:
// old, which must occur exactly once in file (so that a change to the code
// cannot leave the bug silently unplanted), becomes new.
type edit struct {
	file     string // from the module's root
	old, new string
}

// mutationBugs are the bugs no wrapper can express: each is a change to
// the source of handoff or session, applied to a copy of the file that a
// build reads instead of the original (go test -overlay), so the code in
// the repository carries no trace of them.
func mutationBugs() []plantedBug {
	mut := func(name, family string, edits ...edit) plantedBug {
		return plantedBug{name: name, family: family, how: "mutation", edits: edits}
	}
	// The line of the target launch that both RetryKeepsTarget and
	// TargetActivatedEarly plant their bug before.
	const setTarget = "\tf.h.TargetSession = target.ID\n"
	return []plantedBug{
		// The three bugs found in the code before this harness, kept planted.
		mut("StopOnAnyNodeConfirmed", "fencing", edit{"handoff/stop.go",
			"\tcase lease == leaseLive:\n\t\treturn c.awaitStop(ctx, row, seq)\n", ""}),
		mut("EarlyEndBeforeReadyLost", "launch races", edit{"session/start.go",
			"s.endWith(id, endReason(st), false, true, launch)", "s.endWith(id, endReason(st), false, false, launch)"}),
		mut("ShutdownKeepsUnconfirmed", "shutdown", edit{"handoff/effects.go",
			"stop was confirmed is now the whole truth.\n\t\tf.h.StopUnconfirmed = !f.confirmed\n",
			"stop was confirmed is now the whole truth.\n\t\tf.h.StopUnconfirmed = !f.confirmed || f.h.StopUnconfirmed\n"}),
		// The earlier planted set.
		mut("ReplayAnyFingerprint", "idempotency", edit{"handoff/create.go",
			"case err == nil && prev.Fingerprint == fp:", "case err == nil:"}),
		mut("ReconcileRelaunches", "fencing", edit{"handoff/restart.go",
			"\t\tout = append(out, public(h))\n\t}\n\treturn out, nil\n",
			"\t\t_, _ = c.Decide(ctx, h.Workspace, h.ID, Retry)\n\t\tout = append(out, public(h))\n\t}\n\treturn out, nil\n"}),
		mut("NoTokenCheck", "attempt tagging", edit{"handoff/report.go",
			"case !h.GenerationToken.Matches(t):", "case !h.GenerationToken.Matches(t) && false:"}),
		mut("UnconfirmedStopIsStop", "attempt tagging", edit{"handoff/stop.go",
			"\tif !out.Confirmed() {\n\t\tin = input{trigger: TriggerCancelUnconfirmed,", "\tif false {\n\t\tin = input{trigger: TriggerCancelUnconfirmed,"}),
		// Issue families.
		mut("ReconcileNoRetake", "fencing", edit{"handoff/effects.go",
			"func retakeReservation(ctx context.Context, _ ...any) error {\n\treturn take(fireOf(ctx))\n",
			"func retakeReservation(ctx context.Context, _ ...any) error {\n\treturn nil\n"}),
		mut("OwnerNotChecked", "fencing", edit{"session/reservation.go",
			"\tif !r.Held {\n\t\treturn nil\n\t}\n\tif owner.Token.IsZero() {", "\tif true {\n\t\treturn nil\n\t}\n\tif owner.Token.IsZero() {"}),
		mut("StaleCallbackApplied", "attempt tagging", edit{"handoff/fire.go",
			"if h := f.row; h.Attempt != attempt || h.StopRequested || !isActive(h.State) {",
			"if h := f.row; h.StopRequested || !isActive(h.State) {"}),
		mut("CallbackAfterStop", "attempt tagging", edit{"handoff/fire.go",
			"if h := f.row; h.Attempt != attempt || h.StopRequested || !isActive(h.State) {",
			"if h := f.row; h.Attempt != attempt || !isActive(h.State) {"}),
		mut("TimeoutIgnoresUnconfirmed", "attempt tagging", edit{"handoff/driver.go",
			"input{trigger: TriggerGenerationTimedOut, confirmed: out.Confirmed(),",
			"input{trigger: TriggerGenerationTimedOut, confirmed: true,"}),
		mut("RetryKeepsTarget", "launch races",
			edit{"handoff/effects.go", "\tf.h.Error = \"\"\n\tf.h.TargetSession = \"\"\n", "\tf.h.Error = \"\"\n"},
			edit{"handoff/effects.go", setTarget, "\tif f.h.TargetSession != \"\" {\n\t\ttarget.ID = f.h.TargetSession\n\t}\n" + setTarget}),
		mut("TargetActivatedEarly", "launch races", edit{"handoff/effects.go",
			setTarget, "\t_, _ = session.Activate(f.tx, target.ID, f.now)\n" + setTarget}),
		mut("ShutdownNoSettle", "shutdown", edit{"handoff/restart.go",
			"\t\tin := input{trigger: TriggerShutdown, confirmed: out.Confirmed(), errMsg: msg}\n",
			"\t\tin := input{trigger: TriggerShutdown, confirmed: out.Confirmed(), errMsg: msg}\n\t\tcontinue\n"}),
		mut("WakeupFiredWhileReserved", "sessions", edit{"session/wakeup.go",
			"Reserved(tx, cur.Workspace); err != nil || r {", "Reserved(tx, cur.Workspace); err != nil || r && cur.ID == \"\" {"}),
	}
}

// plantedEnv names the mutation TestPlantedMutation catches in a build
// with that mutation applied.
const plantedEnv = "BATON_PLANTED"

// plantedLine is the line TestPlantedMutation prints for each catch.
var plantedLine = regexp.MustCompile(`(?m)^planted: \S+ caught after (\d+) sequences: (.*)$`)

// catchMutation builds the package's tests with bug's edits applied and
// runs TestPlantedMutation there, which runs the harness runs times; it
// returns the sequences each run took to catch the bug and the first line
// of each failure.
func catchMutation(t *testing.T, bug plantedBug, runs int) ([]int, []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module's root is not %s: %v", root, err)
	}
	dir := t.TempDir()
	replace := map[string]string{}
	for i, e := range bug.edits {
		path := filepath.Join(root, filepath.FromSlash(e.file))
		src := replace[path]
		if src == "" {
			src = path
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), e.old); n != 1 {
			t.Fatalf("%s: the code to mutate occurs %d times in %s, want once: the code changed, plant the bug again\n%s",
				bug.name, n, e.file, e.old)
		}
		mutated := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(path)))
		if err := os.WriteFile(mutated, []byte(strings.Replace(string(b), e.old, e.new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		replace[path] = mutated
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	ctx := context.Background()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, goBin, "test", "-overlay", ovPath, "-count=1", "-v", "-run", "^TestPlantedMutation$", ".")
	cmd.Env = append(os.Environ(), plantedEnv+"="+bug.name, "PLANTED_TABLE="+strconv.Itoa(runs))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the harness did not catch %s (%s, %s): go test with the mutation: %v\n%s", bug.name, bug.family, bug.how, err, out)
	}
	var ns []int
	var whys []string
	for _, m := range plantedLine.FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		ns, whys = append(ns, n), append(whys, m[2])
	}
	if len(ns) != runs {
		t.Fatalf("%s: %d catches reported, want %d:\n%s", bug.name, len(ns), runs, out)
	}
	return ns, whys
}

// TestPlantedMutation is run by TestHarnessCatchesPlantedBugs in a build
// of this package with one mutation applied, named by BATON_PLANTED: it
// runs the harness against it (PLANTED_TABLE times, at least once) and
// fails unless every run catches it. It skips in any other run.
func TestPlantedMutation(t *testing.T) {
	name := os.Getenv(plantedEnv)
	if name == "" {
		t.Skip("run by TestHarnessCatchesPlantedBugs, in a build with the mutation " + plantedEnv + " names")
	}
	plantedFlags(t)
	var bug *plantedBug
	for _, b := range mutationBugs() {
		if b.name == name {
			bug = &b
		}
	}
	if bug == nil {
		t.Fatalf("no mutation %q", name)
	}
	runs, _ := strconv.Atoi(os.Getenv("PLANTED_TABLE"))
	for range max(runs, 1) {
		n, why := catch(t, *bug)
		if why == "" {
			t.Fatalf("the harness did not catch %s", name)
		}
		fmt.Printf("planted: %s caught after %d sequences: %s\n", name, n, why)
	}
}
