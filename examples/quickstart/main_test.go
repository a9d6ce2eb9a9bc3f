package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// normalizers replace what changes from run to run: offsets, ids, the
// random suffix of a document's name.
var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[+-]\s*\d+\.\dms`), "+T"},
	{regexp.MustCompile(`hof_[a-z2-7]{26}-[a-z2-7]+\.md`), "hof_ID-SUFFIX.md"},
	{regexp.MustCompile(`hof_[a-z2-7]{26}`), "hof_ID"},
	{regexp.MustCompile(`ses_[a-z2-7]{26}`), "ses_ID"},
}

func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// row is one line of a printed timeline.
type row struct {
	Trigger, State string
	Attempt        int
}

var rowRE = regexp.MustCompile(`^\s+\+T\s+(\w+)\s+-> (\w+)\s+attempt (\d+)$`)

// timelines returns the printed timelines, one per "timeline:" heading.
func timelines(t *testing.T, out string) [][]row {
	t.Helper()
	var all [][]row
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "timeline:" {
			all = append(all, nil)
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if len(all) == 0 {
			t.Fatalf("timeline row before any heading: %q", line)
		}
		n, _ := strconv.Atoi(m[3])
		all[len(all)-1] = append(all[len(all)-1], row{m[1], m[2], n})
	}
	return all
}

func runOutput(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := run(&buf); err != nil {
		t.Fatalf("run: %v\noutput so far:\n%s", err, buf.String())
	}
	return normalize(buf.String())
}

// TestRun runs the program once and checks its story: the timelines, then
// the lines that state each guarantee.
func TestRun(t *testing.T) {
	out := runOutput(t)
	t.Run("timelines", func(t *testing.T) { checkTimelines(t, out) })
	t.Run("key lines", func(t *testing.T) { checkKeyLines(t, out) })
}

func checkTimelines(t *testing.T, out string) {
	want := [][]row{
		{
			{"Create", "stopping", 1},
			{"SourceStopped", "generating", 1},
			{"SubmitReport", "generating", 1},
			{"GenerationEnded", "starting", 1},
			{"TargetReady", "completed", 1},
		},
		{
			{"Create", "stopping", 1},
			{"SourceStopped", "starting", 1},
			{"TargetFailed", "failed", 1},
			{"Retry", "stopping", 2},
			{"SourceStopped", "starting", 2},
			{"TargetReady", "completed", 2},
		},
	}
	if diff := cmp.Diff(want, timelines(t, out)); diff != "" {
		t.Errorf("timelines (-want +got):\n%s\noutput:\n%s", diff, out)
	}
}

func checkKeyLines(t *testing.T, out string) {
	tests := []struct {
		name, line string
	}{
		{"first completes", "  result: completed, attempt 1"},
		{"target current", "    current session is the target: true (model demo-large, native id native-3)"},
		{"wakeup moved", `    wakeup "Check CI on the pull request." moved to the target, prompt and time unchanged: true`},
		{"released", "    reservation released: true"},
		{"report", "    report stored: true (11 lines)"},
		{"document", "    document: <root>/.ai/handoffs/hof_ID-SUFFIX.md (mode 0600)"},
		{"document title", "      | # Session transfer: handoff hof_ID (attempt 1)"},
		{"launches 1", "    launches: 3 (source, its report-only turn, target); at most 1 process at once"},
		{"rejected", "  attempt 1: failed: the target was not ready: engine: readiness rejected"},
		{"source restored", "    source is current again: true (model demo-small); workspace still reserved: true"},
		{"retry", "  Decide(retry): stopping, attempt 2"},
		{"retry completes", "  result: completed, attempt 2"},
		{"history 1", "    history: attempt 1 failed"},
		{"history 2", "    history: attempt 2 completed"},
		{"retry target current", "    current session is the target: true (model demo-large)"},
		{"launches 2", "    launches: 3 (source, rejected target, target of attempt 2); at most 1 process at once"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(out, "\n"+tt.line+"\n") {
				t.Errorf("output lacks the line\n%s\noutput:\n%s", tt.line, out)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  +12.5ms  Create", "  +T  Create"},
		{"<root>/.ai/handoffs/hof_abcdefghijklmnopqrstuvwxyz-abcde234.md", "<root>/.ai/handoffs/hof_ID-SUFFIX.md"},
		{"handoff hof_abcdefghijklmnopqrstuvwxyz (attempt 1)", "handoff hof_ID (attempt 1)"},
		{"hof_short stays", "hof_short stays"},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
