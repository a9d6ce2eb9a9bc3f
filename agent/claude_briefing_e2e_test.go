//go:build linux

package agent_test

import (
	"github.com/batonhq/baton"

	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/engine/exec/clitest"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// reportAnswer is what the scripted model says once its report is stored,
// at the end of the report-only turn: recorded in the source transcript,
// it must never reach the target.
const reportAnswer = "The report is submitted; I am ending my turn now."

// reportPromptStart is how the prompt of a source's report-only turn
// begins.
const reportPromptStart = "This conversation is being handed off to a fresh session."

// briefingScript is the model of TestClaudeTargetIsBriefedWithTheConversation:
// the source's turn answers sourceReply; the report-only turn submits
// e2eReport, then answers reportAnswer; every other turn answers "On it."
// without a tool.
func briefingScript() clitest.Script {
	var streamed atomic.Int32
	return func(r clitest.Request) clitest.Reply {
		if !r.Stream {
			return clitest.Text("ok")
		}
		n := streamed.Add(1)
		submit, ok := r.Tool(clitest.ToolSubmit)
		switch {
		case ok && len(r.Results()) > 0:
			return clitest.Text(reportAnswer)
		case ok:
			return clitest.Calls(clitest.Call{Name: submit, Input: map[string]string{"report": e2eReport}})
		case n == 1:
			return clitest.Text(sourceReply)
		}
		return clitest.Text("On it.")
	}
}

// TestClaudeTargetIsBriefedWithTheConversation drives the real Claude Code
// CLI through a transfer with a report and the default briefing of a Host
// (New): the target's first request to the API holds the source
// conversation (redacted with the MCP server's secrets) and the report,
// and neither the report prompt nor the source's answer to it, although
// both are in the source's transcript, marked as the report-only turn.
func TestClaudeTargetIsBriefedWithTheConversation(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api := clitest.NewMessages(t, briefingScript())
	r := newRig(t, rigOpts{engine: agent.Claude, model: "claude-test-1", env: api.ClaudeEnv(clitest.Home(t)), timeout: 90 * time.Second,
		limits: recap.Limits{Secrets: []string{e2eSecret}}, claude: &exec.ClaudeOptions{Command: bin}})
	task := "Fix the parser. The staging password is " + e2eSecret + "."
	src := r.source(t, task)
	h := r.transfer(t, src.ID, "claude-test-2")
	if h.State != store.StateCompleted || h.Report != e2eReport {
		t.Fatalf("the transfer settled %s (%s) with report %q; want completed with %q", h.State, h.Error, h.Report, e2eReport)
	}
	r.idle(t)

	// The source transcript holds the report-only turn, marked.
	var reportTurn []string
	for _, ev := range r.transcript(t, src.ID) {
		if ev.Kind == transcript.Message && ev.Turn == transcript.ReportOnly {
			reportTurn = append(reportTurn, ev.Text)
		}
	}
	// handoff's report prompt opens with reportPromptStart.
	if !slices.ContainsFunc(reportTurn, func(s string) bool { return strings.HasPrefix(s, reportPromptStart) }) || !slices.ContainsFunc(reportTurn, func(s string) bool { return strings.Contains(s, reportAnswer) }) {
		t.Fatalf("the source transcript's report-only messages = %q; want the report prompt and the answer", reportTurn)
	}

	// The target's first request: the first whose opening message is a
	// transfer's briefing.
	var target clitest.Request
	for _, req := range api.Streamed() {
		if len(req.Messages) > 0 && strings.Contains(req.Messages[0].Text, "# Session transfer") {
			target = req
			break
		}
	}
	if target.Body == nil {
		t.Fatal("no request of the target reached the API")
	}
	first := target.Messages[0].Text
	for _, want := range []string{
		"## Conversation so far",
		"User:\n> Fix the parser. The staging password is " + baton.Redacted + ".",
		"Agent:\n> " + sourceReply,
		"## Report from the previous session\n\n" + e2eReport,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the target's first request lacks %q; its opening message:\n%s", want, first)
		}
	}
	for _, not := range []string{e2eSecret, "Do not continue the work", "submit_session_handoff tool. Cover", reportAnswer, "Nothing was exchanged", "not included"} {
		if strings.Contains(string(target.Body), not) {
			t.Errorf("the target's first request holds %q; its opening message:\n%s", not, first)
		}
	}
}

// TestClaudeTargetIsBriefedWithoutAReport: a transfer without a report,
// with the real Claude Code CLI. The target's first request holds the
// source conversation (redacted) and says no summary was made; it never
// says nothing was exchanged.
func TestClaudeTargetIsBriefedWithoutAReport(t *testing.T) {
	bin := clitest.ClaudeBin(t)
	api := clitest.NewMessages(t, briefingScript())
	r := newRig(t, rigOpts{engine: agent.Claude, model: "claude-test-1", env: api.ClaudeEnv(clitest.Home(t)), timeout: 90 * time.Second,
		limits: recap.Limits{Secrets: []string{e2eSecret}}, claude: &exec.ClaudeOptions{Command: bin}})
	src := r.source(t, "Fix the parser. The staging password is "+e2eSecret+".")
	h := r.transferWith(t, src.ID, "claude-test-2", false)
	if h.State != store.StateCompleted || h.Report != "" {
		t.Fatalf("the transfer settled %s (%s) with report %q; want completed without one", h.State, h.Error, h.Report)
	}
	r.idle(t)
	var first string
	for _, req := range api.Streamed() {
		if len(req.Messages) > 0 && strings.Contains(req.Messages[0].Text, "# Session transfer") {
			first = req.Messages[0].Text
			break
		}
	}
	if first == "" {
		t.Fatal("no request of the target reached the API")
	}
	for _, want := range []string{
		"## Conversation so far",
		"User:\n> Fix the parser. The staging password is " + baton.Redacted + ".",
		"Agent:\n> " + sourceReply,
		"No LLM summary was made",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the target's first request lacks %q; its opening message:\n%s", want, first)
		}
	}
	for _, not := range []string{e2eSecret, "Nothing was exchanged", e2eReport, "Do not continue the work"} {
		if strings.Contains(first, not) {
			t.Errorf("the target's first request holds %q; its opening message:\n%s", not, first)
		}
	}
}
