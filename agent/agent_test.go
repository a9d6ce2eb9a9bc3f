//go:build linux

package agent_test

import (
	"github.com/batonhq/baton"

	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/agent"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/recap"
	"github.com/batonhq/baton/session"
	"github.com/batonhq/baton/store"
	"github.com/batonhq/baton/transcript"
)

// agentLine is a JSON line the stand-in agent prints.
type agentLine struct {
	Type    string   `json:"type"`
	Names   []string `json:"names"`
	Name    string   `json:"name"`
	IsError bool     `json:"is_error"`
	Text    string   `json:"text"`
}

// agentProfile runs the stand-in agent, wired: the MCP configuration file
// and the allowed tools as flags, the report as the report-only turn's.
func agentProfile(report string) func(w *agent.Wiring) exec.Profile {
	return func(w *agent.Wiring) exec.Profile {
		is := func(typ string) []exec.Rule { return []exec.Rule{{Fields: map[string]string{"type": typ}}} }
		p := exec.Profile{
			Name:       "agent",
			Command:    bins["agent"],
			Fresh:      []string{"-prompt", "{prompt}", "{flags}"},
			Resume:     []string{"-resume", "{native_id}", "-prompt", "{prompt}", "{flags}"},
			Model:      []string{"-model", "{model}"},
			ReportOnly: []string{"-read-only", "-report", report},
			Output: exec.Output{
				JSON:     true,
				NativeID: []exec.Rule{{Fields: map[string]string{"type": "init"}, ID: "session_id"}},
				Ready:    is("ready"),
				TurnEnd:  is("end"),
			},
		}
		return w.Profile(p, func(l agent.Launch) []string {
			return []string{"-mcp-config", "{file:mcp.json}", "-allowed", strings.Join(l.Tools, ",")}
		})
	}
}

// agentTurns splits a transcript of the stand-in agent into its turns
// (from one init line to the next) of parsed lines.
func agentTurns(t *testing.T, evs []transcript.Event) [][]agentLine {
	t.Helper()
	var turns [][]agentLine
	for _, ev := range evs {
		if ev.Speaker != transcript.Agent || ev.Kind != transcript.Message {
			continue
		}
		var l agentLine
		if err := json.Unmarshal([]byte(ev.Text), &l); err != nil {
			t.Fatalf("transcript line %q: %v", ev.Text, err)
		}
		if l.Type == "init" {
			turns = append(turns, nil)
		}
		if len(turns) == 0 {
			t.Fatalf("line %q before an init line", ev.Text)
		}
		turns[len(turns)-1] = append(turns[len(turns)-1], l)
	}
	return turns
}

// mcpLines keeps the tools and tool lines of a turn.
func mcpLines(turn []agentLine) []agentLine {
	var out []agentLine
	for _, l := range turn {
		if l.Type == "tools" || l.Type == "tool" {
			out = append(out, l)
		}
	}
	return out
}

// TestAgentTransferOverMCP runs a transfer with a report through the exec
// engine with a custom profile whose agent speaks MCP with the official
// SDK's client, over streamable HTTP and over the stdio bridge: the
// report-only turn lists the report scope's tools and submits its report,
// the transfer completes with it, and each turn of the target (its first
// and a later one) lists the target scope's tools and reads the source's
// conversation, redacted. The source's ordinary turn gets no MCP server.
func TestAgentTransferOverMCP(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "hunter2-correct-horse"
	for _, tc := range []struct {
		name   string
		bridge []string
	}{
		{"http", nil},
		{"stdio", []string{exe, bridgeArg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report := "## Handoff over " + tc.name + "\nThe parser is fixed."
			r := newRig(t, rigOpts{engine: "agent", model: "small", profile: agentProfile(report),
				limits: recap.Limits{Secrets: []string{secret}}, timeout: 60 * time.Second, bridge: tc.bridge})
			src := r.source(t, "Fix the parser. The staging password is "+secret+".")
			h := r.transfer(t, src.ID, "large")
			if h.State != store.StateCompleted {
				t.Fatalf("the transfer settled %s (%s); want completed", h.State, h.Error)
			}
			if h.Report != report {
				t.Errorf("the stored report = %q (HasReport %v); want %q", h.Report, h.Report != "", report)
			}
			r.idle(t)
			// A later turn of the target, outside the transfer.
			if _, err := r.co.Sessions().Start(r.ctx, session.TurnRequest{Workspace: r.ws, Prompt: "go on"}); err != nil {
				t.Fatal(err)
			}
			r.idle(t)

			srcTurns := agentTurns(t, r.transcript(t, src.ID))
			if len(srcTurns) != 2 {
				t.Fatalf("the source ran %d turns; want its own and the report-only one", len(srcTurns))
			}
			if got := mcpLines(srcTurns[0]); len(got) != 0 {
				t.Errorf("the source's ordinary turn used MCP: %+v", got)
			}
			wantReport := []agentLine{
				{Type: "tools", Names: []string{"get_handoff_facts", "submit_session_handoff"}},
				{Type: "tool", Name: "submit_session_handoff", Text: "Report stored"},
				{Type: "tool", Name: "get_handoff_facts", Text: "workspace"},
			}
			if diff := cmp.Diff(wantReport, mcpLines(srcTurns[1]), cmp.Comparer(textHas)); diff != "" {
				t.Errorf("the report-only turn's MCP calls (-want +got, text as substrings):\n%s", diff)
			}

			tgtTurns := agentTurns(t, r.transcript(t, h.TargetSession))
			if len(tgtTurns) != 2 {
				t.Fatalf("the target ran %d turns; want 2", len(tgtTurns))
			}
			for i, turn := range tgtTurns {
				wantTarget := []agentLine{
					{Type: "tools", Names: []string{"get_handoff_facts", "read_source_history"}},
					{Type: "tool", Name: "read_source_history", Text: "Fix the parser. The staging password is " + baton.Redacted},
					{Type: "tool", Name: "get_handoff_facts", Text: "workspace"},
				}
				got := mcpLines(turn)
				if diff := cmp.Diff(wantTarget, got, cmp.Comparer(textHas)); diff != "" {
					t.Errorf("target turn %d's MCP calls (-want +got, text as substrings):\n%s", i+1, diff)
				}
				for _, l := range got {
					if strings.Contains(l.Text, secret) {
						t.Errorf("target turn %d got the secret from %s", i+1, l.Name)
					}
				}
			}
		})
	}
}

// textHas compares agent lines, want's Text as a substring of got's.
func textHas(a, b agentLine) bool {
	want, got := a, b
	if len(want.Text) > len(got.Text) {
		want, got = got, want
	}
	return want.Type == got.Type && want.Name == got.Name && want.IsError == got.IsError &&
		slices.Equal(want.Names, got.Names) && strings.Contains(got.Text, want.Text)
}
