//go:build linux

package exec_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/internal/tlog"
	"github.com/batonhq/baton/transcript"
)

// runTurn runs one launch of session sid to its end.
func runTurn(t *testing.T, e *exec.Engine, req engine.StartRequest) {
	t.Helper()
	ctx := testCtx(t)
	p, err := e.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if x := waitDone(t, p); !x.Clean() {
		t.Fatalf("Exit = %+v", x)
	}
}

func TestTranscriptEvents(t *testing.T) {
	e := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit")})
	runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "one"})
	runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "two", Mode: engine.Resume, NativeID: "native-1"})
	all := events(t, e, "s1")
	// Two launches: lifecycle, prompt, 4 output lines, lifecycle each.
	if len(all) != 14 {
		t.Fatalf("transcript has %d events; want 14: %+v", len(all), all)
	}
	if all[8] != (transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: "two"}) {
		t.Errorf("event 8 = %+v; want the second prompt", all[8])
	}
	tr, err := tlog.OpenReader(e.TranscriptPath("s1"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	tests := []struct {
		from int64
		n    int
		want []transcript.Event
	}{
		{0, 1, all[:1]},
		{3, 4, all[3:7]},
		{13, 5, all[13:]},
		{14, 1, nil},
		{99, 1, nil},
		{5, 0, nil},
	}
	for _, tc := range tests {
		got, err := tr.Events(ctx, tc.from, tc.n)
		if err != nil {
			t.Fatalf("Events(%d, %d): %v", tc.from, tc.n, err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("Events(%d, %d) (-want +got):\n%s", tc.from, tc.n, d)
		}
	}
	if _, err := tr.Events(ctx, -1, 1); !errors.Is(err, baton.ErrInvalid) {
		t.Errorf("Events(-1) error = %v; want EINVALID", err)
	}
	if _, err := tlog.OpenReader(e.TranscriptPath("nobody")); !errors.Is(err, baton.ErrNotFound) {
		t.Errorf("OpenReader(missing) error = %v; want ENOTFOUND", err)
	}
}

// TestTranscriptRepair: a crash can leave a torn index entry, complete
// lines that were never indexed, and a partial last line; the next writer
// indexes the complete lines and cuts the partial one.
func TestTranscriptRepair(t *testing.T) {
	dir := t.TempDir()
	e := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit"), DataDir: dir})
	runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "one"})
	before := events(t, e, "s1")
	path := e.TranscriptPath("s1")
	if err := e.Close(testCtx(t)); err != nil { // its writer lets go of the files
		t.Fatal(err)
	}

	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"at":"2026-01-01T00:00:00Z","kind":"note","text":"unindexed"}` + "\n" + `{"at":"2026-01-01T00:0`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := os.Stat(path + ".idx")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path+".idx", st.Size()-3); err != nil {
		t.Fatal(err)
	}

	e2 := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit"), DataDir: dir})
	runTurn(t, e2, engine.StartRequest{Session: "s1", Prompt: "two"})
	after := events(t, e2, "s1")
	want := append(append([]transcript.Event{}, before...), transcript.Event{Kind: transcript.Note, Text: "unindexed"})
	if d := cmp.Diff(want, after[:len(want)]); d != "" {
		t.Errorf("repaired transcript (-want +got):\n%s", d)
	}
	if got := after[len(want)+1]; got != (transcript.Event{Speaker: transcript.User, Kind: transcript.Message, Text: "two"}) {
		t.Errorf("after the repair, event %d = %+v; want the second prompt", len(want)+1, got)
	}
}

// TestTranscriptBusy: two engines on one data directory never write one
// session's transcript at once.
func TestTranscriptBusy(t *testing.T) {
	ctx := testCtx(t)
	dir := t.TempDir()
	a := newEngine(t, exec.Options{Profile: agentProfile(), DataDir: dir})
	b := newEngine(t, exec.Options{Profile: agentProfile(), DataDir: dir})
	p, err := a.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Start(ctx, engine.StartRequest{Session: "s1", Prompt: "hi"}); !errors.Is(err, baton.ErrBusy) {
		t.Errorf("second writer's Start = %v; want ErrBusy", err)
	}
	if o, err := p.Stop(ctx); !o.Confirmed() {
		t.Fatalf("Stop = %s, %v", o, err)
	}
}

// TestIdleTranscripts: an engine keeps its last eight sessions'
// transcripts open between launches, and lets go of older ones.
func TestIdleTranscripts(t *testing.T) {
	dir := t.TempDir()
	a := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit"), DataDir: dir})
	for i := range 9 {
		runTurn(t, a, engine.StartRequest{Session: baton.SessionID(fmt.Sprint("s", i)), Prompt: "hi"})
	}
	b := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit"), DataDir: dir})
	ctx := testCtx(t)
	if _, err := b.Start(ctx, engine.StartRequest{Session: "s8", Prompt: "hi"}); !errors.Is(err, baton.ErrBusy) {
		t.Errorf("Start on a session the other engine keeps open = %v; want ErrBusy", err)
	}
	// The ninth launch lets go of s0 once its exit sync is done, a moment
	// after its Done: poll, bounded.
	var p engine.Process
	for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
		var err error
		if p, err = b.Start(ctx, engine.StartRequest{Session: "s0", Prompt: "again"}); err == nil {
			break
		}
		if !errors.Is(err, baton.ErrBusy) {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("s0 stayed busy: the engine kept more than eight idle transcripts")
		case <-time.After(d):
		}
	}
	if x := waitDone(t, p); !x.Clean() {
		t.Fatalf("Exit = %+v", x)
	}
	if n := len(events(t, b, "s0")); n != 14 {
		t.Errorf("s0 has %d events after two launches; want 14", n)
	}
}
