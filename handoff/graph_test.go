package handoff_test

import (
	"flag"
	"html"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/handoff"
	"github.com/batonhq/baton/store"
)

var update = flag.Bool("update", false, "rewrite the Mermaid block of README.md from MachineGraph, and the golden briefings under testdata/")

// states are the states of the transfer machine (see the package doc).
var states = []store.HandoffState{
	store.StateStopping, store.StateGenerating, store.StateStarting, store.StateCompleted,
	store.StateFailed, store.StateInterrupted, store.StateCancelled,
}

// machineGraph returns MachineGraph(), turning a panic into a test failure
// so that the other tests of the binary still run.
func machineGraph(t *testing.T) (g handoff.Graph) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("MachineGraph panicked: %v", r)
		}
	}()
	return handoff.MachineGraph()
}

// transition is one configured edge: from, trigger, to. The initial
// pseudo-state is "new" in DOT and [*] in Mermaid; both are written "new".
type transition struct{ From, Trigger, To string }

var (
	dotEdgeRE  = regexp.MustCompile(`^\t"?([^"\s]+)"? -> "?([^"\s]+)"? \[label=<<TABLE BORDER="0">(.*)</TABLE>>\];$`)
	dotCellRE  = regexp.MustCompile(`<TD ALIGN="LEFT">(.*?)</TD>`)
	mermaidRE  = regexp.MustCompile(`^    (\S+) --> (\S+): (\w+)( \[[^\]]+\])?$`)
	mermaidEnd = regexp.MustCompile(`^    (\S+) --> \[\*\]$`)
)

// dotTransitions parses the edges of stateless's DOT rendering: one line
// per (from, to) pair, one table row per trigger ("Trigger / actions
// [guard]").
func dotTransitions(t *testing.T, dot string) []transition {
	t.Helper()
	var out []transition
	for _, line := range strings.Split(dot, "\n") {
		if !strings.Contains(line, " -> ") || strings.HasPrefix(line, "\tinit ->") {
			continue
		}
		m := dotEdgeRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("DOT edge line not understood: %q", line)
		}
		for _, cell := range dotCellRE.FindAllStringSubmatch(m[3], -1) {
			trigger, _, _ := strings.Cut(html.UnescapeString(cell[1]), " ")
			out = append(out, transition{m[1], trigger, m[2]})
		}
	}
	slices.SortFunc(out, cmpTransition)
	return out
}

// mermaidTransitions parses Graph.Mermaid, checking that every line is a
// transition, an end marker of a terminal state, or the header.
func mermaidTransitions(t *testing.T, mer string) []transition {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(mer, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "stateDiagram-v2" {
		t.Fatalf("Mermaid does not start with stateDiagram-v2:\n%s", mer)
	}
	var out []transition
	var ends []string
	for _, line := range lines[1:] {
		if m := mermaidEnd.FindStringSubmatch(line); m != nil {
			ends = append(ends, m[1])
			continue
		}
		m := mermaidRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("Mermaid line not understood: %q", line)
		}
		from := m[1]
		if from == "[*]" {
			from = "new"
		}
		out = append(out, transition{from, m[3], m[2]})
	}
	if diff := cmp.Diff([]string{"completed", "cancelled"}, ends); diff != "" {
		t.Errorf("end markers (-want +got):\n%s", diff)
	}
	slices.SortFunc(out, cmpTransition)
	return out
}

func cmpTransition(a, b transition) int {
	return strings.Compare(a.From+"\x00"+a.Trigger+"\x00"+a.To, b.From+"\x00"+b.Trigger+"\x00"+b.To)
}

func TestGraphDOTNamesEveryState(t *testing.T) {
	dot := machineGraph(t).DOT
	if !strings.HasPrefix(dot, "digraph {\n") || !strings.HasSuffix(dot, "}\n") {
		t.Fatalf("DOT is not a digraph block:\n%s", dot)
	}
	if o, c := strings.Count(dot, "{"), strings.Count(dot, "}"); o != c {
		t.Errorf("DOT braces unbalanced: %d { and %d }", o, c)
	}
	for _, s := range states {
		node := regexp.MustCompile(`(?m)^\t"?` + string(s) + `"? \[label="` + string(s) + `[|"]`)
		if !node.MatchString(dot) {
			t.Errorf("DOT has no node for state %s:\n%s", s, dot)
		}
	}
	if len(dotTransitions(t, dot)) == 0 {
		t.Error("DOT has no edges")
	}
}

// TestGraphMermaidOneLinePerTransition checks the Mermaid picture, built
// from the transition table, against the machine stateless was configured
// with (its DOT): the same transitions, each on one line.
func TestGraphMermaidOneLinePerTransition(t *testing.T) {
	g := machineGraph(t)
	want := dotTransitions(t, g.DOT)
	got := mermaidTransitions(t, g.Mermaid)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Mermaid transitions differ from the configured machine (-DOT +Mermaid):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, tr := range got {
		seen[tr.From], seen[tr.To] = true, true
	}
	for _, s := range states {
		if !seen[string(s)] {
			t.Errorf("no Mermaid transition touches %s", s)
		}
	}
}

var mermaidBlockRE = regexp.MustCompile("(?s)```mermaid\n(.*?)```\n")

// TestREADMEMermaid keeps README.md's diagram equal to MachineGraph: run
// with -update to rewrite it.
func TestREADMEMermaid(t *testing.T) {
	want := machineGraph(t).Mermaid
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	m := mermaidBlockRE.FindStringSubmatchIndex(readme)
	if m == nil {
		t.Fatal("README.md has no ```mermaid block")
	}
	if got := readme[m[2]:m[3]]; got != want {
		if !*update {
			t.Fatalf("README.md's Mermaid block is stale; run go test ./handoff -run TestREADMEMermaid -update (-README +MachineGraph):\n%s",
				cmp.Diff(got, want))
		}
		if err := os.WriteFile("README.md", []byte(readme[:m[2]]+want+readme[m[3]:]), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("README.md's Mermaid block rewritten")
	}
}
