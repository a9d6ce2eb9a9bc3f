//go:build linux

package agent_test

import (
	"github.com/batonhq/baton"

	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
)

// The transfer the end-to-end tests of the real CLIs drive: the source's
// prompt holds e2eSecret, and the report-only turn submits e2eReport.
const (
	e2eReport = "## Handoff\nThe tokenizer in parse.go is fixed; TestParse passes. Next: the error messages."
	e2eSecret = "hunter2-correct-horse"
)

// e2eScript is the scripted model of the end-to-end tests: it does its
// part of the transfer (clitest.Transfer), the source answering
// sourceReply, the report-only turn submitting report.
func e2eScript(report string) clitest.Script {
	return clitest.Transfer{Reply: sourceReply, Report: report}.Script()
}

// toolResults returns the tool results that reached api, in order.
func toolResults(api *clitest.API) []clitest.ToolResult {
	var out []clitest.ToolResult
	for _, r := range api.Streamed() {
		out = append(out, r.Results()...)
	}
	return out
}

// offeredTools returns, for each streamed request of api, the tools it
// offered whose names start with prefix, sorted.
func offeredTools(api *clitest.API, prefix string) [][]string {
	var out [][]string
	for _, r := range api.Streamed() {
		var names []string
		for _, n := range r.Tools {
			if strings.HasPrefix(n, prefix) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		out = append(out, names)
	}
	return out
}

// transferE2E builds a rig of o (with the end-to-end tests' timeout and
// e2eSecret to redact), runs the source turn and the transfer to model on
// it, and checks what both CLIs must do: the transfer completes with
// e2eReport, and four tool results reach api (facts and the submission in
// the report-only turn, the history page and facts in the target's
// first), each of a tool named prefix + its name, none an error. The CLIs hand the model a tool's
// structured content (the submission's "stored":true); the history page is
// the source conversation with the secret redacted.
func transferE2E(t *testing.T, o rigOpts, api *clitest.API, model, prefix string) *rig {
	t.Helper()
	o.timeout, o.limits = 90*time.Second, recap.Limits{Secrets: []string{e2eSecret}}
	r := newRig(t, o)
	src := r.source(t, "Fix the parser. The staging password is "+e2eSecret+".")
	h := r.transfer(t, src.ID, model)
	if h.State != store.StateCompleted {
		t.Fatalf("the transfer settled %s (%s); want completed; tool results %+v", h.State, h.Error, toolResults(api))
	}
	if h.Report != e2eReport {
		t.Errorf("the stored report = %q (HasReport %v); want %q", h.Report, h.Report != "", e2eReport)
	}

	// The target's first turn reads the history; its tool result reaches
	// the API in the next request, before the turn ends. Four tool
	// results in all.
	r.idle(t)
	res := toolResults(api)
	if len(res) != 4 {
		t.Fatalf("tool results = %+v; want 4", res)
	}
	// A CLI may run one turn's two tool calls in parallel and return their
	// results in either order: match each turn's pair as a set.
	find := func(turn []clitest.ToolResult, tool string) (clitest.ToolResult, bool) {
		for _, r := range turn {
			if r.Tool == prefix+tool && !r.IsError {
				return r, true
			}
		}
		return clitest.ToolResult{}, false
	}
	report, target := res[:2], res[2:]
	submitted, ok1 := find(report, "submit_session_handoff")
	factsR, ok2 := find(report, "get_handoff_facts")
	histR, ok3 := find(target, "read_source_history")
	factsT, ok4 := find(target, "get_handoff_facts")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		t.Fatalf("tool results = %+v; want facts and the submission in the report turn, the history and facts in the target's", res)
	}
	if !strings.Contains(submitted.Text, `"stored":true`) {
		t.Errorf("the submission's result = %+v; want the report stored", submitted)
	}
	for _, r := range []clitest.ToolResult{factsR, factsT} {
		if !strings.Contains(r.Text, "not a git repository") {
			t.Errorf("the facts' result = %+v; want the note on the workspace", r)
		}
	}
	hist := histR.Text
	for _, want := range []string{"Fix the parser. The staging password is " + baton.Redacted, sourceReply} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history page lacks %q:\n%s", want, hist)
		}
	}
	if strings.Contains(hist, e2eSecret) {
		t.Errorf("the history page holds the secret:\n%s", hist)
	}
	return r
}
