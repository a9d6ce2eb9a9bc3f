//go:build linux

package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batonhq/baton/engine/exec/clitest"
)

// The conversation of TestRealAgentPressure: two turns of the source,
// the second with a tool loop, and the notes file its Read call reads.
const (
	pressurePrompt1 = "TURN-ONE: find where the parser fails."
	pressureReply1  = "The parser fails in tokenize(): it drops the last token."
	pressurePrompt2 = "TURN-TWO: read notes.txt, then fix tokenize()."
	pressureReply2  = "Fixed tokenize() as notes.txt suggests; the last token is kept now."
	pressureNotes   = "tokenize() must flush its buffer at end of input."
	pressureTarget  = "I have the briefing and will go on from the fix."
)

// The usage the scripted API reports, in Claude Code's window for an
// unknown model (200,000 tokens; 0.8 of it is 160,000): the first turn's
// one request is under the threshold (51,000), and so is the first
// request of the second turn (the Read call: 99,200); only the last
// request of the second turn is over it (170,000 in context). The second
// turn's sum (269,200) is over it too, so a policy that read the sum, or
// the first request, would fire with other numbers or not at all.
var (
	pressureTurn1 = clitest.Usage{Input: 1000, CacheCreation: 50000, Output: 300}
	pressureCall  = clitest.Usage{Input: 200, CacheCreation: 9000, CacheRead: 90000, Output: 80}
	pressureLast  = clitest.Usage{Input: 500, CacheCreation: 1500, CacheRead: 168000, Output: 120}
)

// pressureScript is the model behind TestRealAgentPressure's API: notes
// holds the absolute path of the file the second turn reads (set once the
// workspace exists, before its first turn).
func pressureScript(notes *atomic.Value) clitest.Script {
	return func(r clitest.Request) clitest.Reply {
		last := r.LastUser()
		switch {
		case !r.Stream:
			return clitest.Text("ok")
		case strings.Contains(last, "TURN-ONE"):
			return clitest.Reply{Text: pressureReply1, Usage: &pressureTurn1}
		case strings.Contains(last, "TURN-TWO") && len(r.Results()) == 0:
			return clitest.Reply{Calls: []clitest.Call{{Name: "Read", Input: map[string]string{"file_path": notes.Load().(string)}}}, Usage: &pressureCall}
		case strings.Contains(last, "TURN-TWO"):
			return clitest.Reply{Text: pressureReply2, Usage: &pressureLast}
		}
		return clitest.Text(pressureTarget) // the target's turn: the default usage, far under the threshold
	}
}

// TestRealAgentPressure: with -engine claude, a workspace whose policy
// (set over the API) is 0.8 of the window hands over by itself after the
// turn that crossed it, once: the real Claude Code CLI runs against a
// scripted API whose first turn stays under the threshold and whose
// second, a tool loop, ends with a request over it. The transfer is
// created after the second turn settled, says why (the last request's
// context, not the turn's sum), and the target CLI's prompt, its
// briefing, carries both turns of the conversation. Skipped without the
// CLI; failed under CI=true.
func TestRealAgentPressure(t *testing.T) {
	t.Parallel()
	bin := clitest.ClaudeBin(t)
	data := t.TempDir()
	var notesPath atomic.Value
	api := clitest.NewMessages(t, pressureScript(&notesPath))
	p := startBinaryEnv(t, data, append(api.ClaudeEnv(clitest.Home(t)), "BATON_TOKEN="+agentsToken), "-engine", "claude", "-claude-bin", bin)
	p.token = agentsToken
	p.patience = 3 * time.Minute // three CLI launches, on a busy machine
	ws := str(p.must(http.StatusCreated, "POST", "/api/workspaces", map[string]any{"name": "pressure", "engine": "claude", "model": "claude-test-1"}).Body, "workspace", "id")
	p.must(http.StatusOK, "PUT", "/api/workspaces/"+ws+"/pressure", map[string]any{"threshold": 0.8})
	notes := filepath.Join(data, "workspaces", ws, "notes.txt")
	notesPath.Store(notes)
	if err := os.WriteFile(notes, []byte(pressureNotes+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	src := str(p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": pressurePrompt1}).Body, "session", "id")
	p.waitIdle(ws)
	sessionUsage := func(id string) map[string]any {
		t.Helper()
		for _, s := range p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/sessions", nil).Body["sessions"].([]any) {
			if m := s.(map[string]any); m["id"] == id {
				u, _ := m["usage"].(map[string]any)
				return u
			}
		}
		return nil
	}
	if u := sessionUsage(src); u == nil || u["tokens"] != float64(51000) || u["window"] != float64(200000) {
		t.Fatalf("the first turn's usage = %v; want 51,000 of 200,000\n%s", u, p.logs.String())
	}
	time.Sleep(300 * time.Millisecond) // a transfer would have been created by now
	if hs := p.must(http.StatusOK, "GET", "/api/workspaces/"+ws+"/session-handoffs", nil).Body["handoffs"].([]any); len(hs) != 0 {
		t.Fatalf("a turn under the threshold started a transfer: %v", hs)
	}
	before := len(api.Streamed())

	if got := str(p.must(http.StatusCreated, "POST", "/api/workspaces/"+ws+"/sessions", map[string]any{"prompt": pressurePrompt2}).Body, "session", "id"); got != src {
		t.Fatalf("the second turn ran in %s, want the source %s resumed", got, src)
	}
	h := pressureHandoff(p, ws, src, 170000, 200000, 0.8)
	p.waitIdle(ws)
	if u := sessionUsage(src); u == nil || u["tokens"] != float64(170000) {
		t.Errorf("the source's usage = %v; want the last request's 170,000", u)
	}

	// The second turn was a tool loop: the Read call's result, then the
	// answer; the target's first request followed it.
	var turn2, target []clitest.Request
	for _, r := range api.Streamed()[before:] {
		if _, ok := r.Tool(clitest.ToolHistory); ok {
			target = append(target, r)
		} else if strings.Contains(r.LastUser(), "TURN-TWO") {
			turn2 = append(turn2, r)
		}
	}
	if len(turn2) != 2 || len(turn2[1].Results()) != 1 || !strings.Contains(turn2[1].Results()[0].Text, pressureNotes) {
		t.Errorf("the second turn's requests = %+v; want the Read call, then its result holding the notes", turn2)
	}
	if len(target) == 0 || len(target[0].Messages) == 0 {
		t.Fatalf("the target's requests = %+v; want its turn's\n%s", target, p.logs.String())
	}
	brief := target[0].Messages[0]
	for _, want := range []string{pressurePrompt1, pressureReply1, pressurePrompt2, pressureReply2} {
		if brief.Role != "user" || !strings.Contains(brief.Text, want) {
			t.Errorf("the target's briefing (its first user message) lacks %q:\n%s", want, brief.Text)
		}
	}
	cur := str(p.must(http.StatusOK, "GET", "/api/workspaces/"+ws, nil).Body, "workspace", "currentSessionId")
	if cur != str(h, "targetSessionId") {
		t.Errorf("the current session is %s, want the target %s", cur, str(h, "targetSessionId"))
	}
}
