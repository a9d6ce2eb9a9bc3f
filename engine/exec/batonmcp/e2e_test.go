//go:build linux

package batonmcp_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
)

// The transfer the end-to-end tests of the real CLIs drive: the source's
// prompt holds e2eSecret, and the report-only turn submits e2eReport.
const (
	e2eReport = "## Handoff\nThe tokenizer in parse.go is fixed; TestParse passes. Next: the error messages."
	e2eSecret = "hunter2-correct-horse"
)

// toolArgs is the JSON input the scripted model passes to the baton tool
// name (matched by the suffix): report to the submission, oldest-first to
// the history, none to the others.
func toolArgs(name, report string) []byte {
	var input any = map[string]any{}
	switch {
	case strings.HasSuffix(name, "submit_session_handoff"):
		input = map[string]string{"report": report}
	case strings.HasSuffix(name, "read_source_history"):
		input = map[string]string{"direction": "oldest-first"}
	}
	b, _ := json.Marshal(input)
	return b
}

// replyText is the scripted model's text answer: "Done." to tool results,
// the source's reply to anything else.
func replyText(results []toolResult) string {
	if len(results) > 0 {
		return "Done."
	}
	return sourceReply
}

// toolLog is what a scripted API of the end-to-end tests records: the tool
// results the CLI sent back and the tool names each request offered.
type toolLog struct {
	mu      sync.Mutex
	results []toolResult
	offered [][]string
	got     chan struct{} // receives at each tool result
}

func newToolLog() toolLog { return toolLog{got: make(chan struct{}, 16)} }

// record notes one request's offered tools and new tool results.
func (l *toolLog) record(offered []string, results []toolResult) {
	l.mu.Lock()
	l.offered = append(l.offered, offered)
	l.results = append(l.results, results...)
	l.mu.Unlock()
	for range results {
		l.got <- struct{}{}
	}
}

func (l *toolLog) toolResults() []toolResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.results)
}

func (l *toolLog) offeredTools() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.offered)
}

// transferE2E builds a rig of o (with the end-to-end tests' timeout and
// e2eSecret to redact), runs the source turn and the transfer to model on
// it, and checks what both CLIs must do: the transfer completes with e2eReport, and
// four tool results reach the API (facts and the submission in the
// report-only turn, the history page and facts in the target's first),
// each a result of its tool by isTool. The CLIs hand the model a tool's
// structured content (the submission's "stored":true); the history page is
// the source conversation with the secret redacted.
func transferE2E(t *testing.T, o rigOpts, l *toolLog, model string, isTool func(res toolResult, tool string) bool) *rig {
	t.Helper()
	o.timeout, o.limits = 90*time.Second, recap.Limits{Secrets: []string{e2eSecret}}
	r := newRig(t, o)
	src := r.source(t, "Fix the parser. The staging password is "+e2eSecret+".")
	h := r.transfer(t, src.ID, model)
	if h.State != store.StateCompleted {
		t.Fatalf("the transfer settled %s (%s); want completed; tool results %+v", h.State, h.Error, l.toolResults())
	}
	if !h.HasReport || h.Report != e2eReport {
		t.Errorf("the stored report = %q (HasReport %v); want %q", h.Report, h.HasReport, e2eReport)
	}

	// The target's first turn reads the history; its tool result reaches
	// the API in the next request. Four tool results in all.
	for i := range 4 {
		select {
		case <-l.got:
		case <-r.ctx.Done():
			t.Fatalf("%d tool results reached the API; want 4: %+v", i, l.toolResults())
		}
	}
	r.idle(t)
	res := l.toolResults()
	if len(res) != 4 {
		t.Fatalf("tool results = %+v; want 4", res)
	}
	// A CLI may run one turn's two tool calls in parallel and return their
	// results in either order: match each turn's pair as a set.
	find := func(turn []toolResult, tool string) (toolResult, bool) {
		for _, r := range turn {
			if isTool(r, tool) {
				return r, true
			}
		}
		return toolResult{}, false
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
	for _, r := range []toolResult{factsR, factsT} {
		if !strings.Contains(r.Text, "not a git repository") {
			t.Errorf("the facts' result = %+v; want the note on the workspace", r)
		}
	}
	hist := histR.Text
	for _, want := range []string{"Fix the parser. The staging password is " + recap.Redacted, sourceReply} {
		if !strings.Contains(hist, want) {
			t.Errorf("the history page lacks %q:\n%s", want, hist)
		}
	}
	if strings.Contains(hist, e2eSecret) {
		t.Errorf("the history page holds the secret:\n%s", hist)
	}
	return r
}
