//go:build linux

package exec_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton"
	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/exec"
	"github.com/batonhq/baton/transcript"
)

// collect ranges over a Transcriber's sequence and fails on its error.
func collect(t *testing.T, seq func(func(transcript.Event, error) bool)) []transcript.Event {
	t.Helper()
	var out []transcript.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("transcript: %v", err)
		}
		out = append(out, ev)
	}
	return out
}

// Every event of a launch carries its turn: the report-only launch's
// prompt and output are marked ReportOnly, the normal ones Normal, and the
// capability yields what the file holds, in order.
func TestTranscriberMarksTurns(t *testing.T) {
	e := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit")})
	runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "fix the parser", Turn: transcript.Normal})
	runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "REPORT now", Turn: transcript.ReportOnly, Mode: engine.Resume, NativeID: "native-1"})
	runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "go on", Turn: transcript.Normal, Mode: engine.Resume, NativeID: "native-1"})
	var tr engine.Transcriber = e
	seq, err := tr.Transcript(testCtx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, seq)
	if d := cmp.Diff(events(t, e, "s1"), got); d != "" {
		t.Fatalf("Transcript differs from the file (-file +Transcript):\n%s", d)
	}
	if len(got) != 21 {
		t.Fatalf("%d events; want 21 (7 per launch)", len(got))
	}
	for i, ev := range got {
		want := transcript.Normal
		if i/7 == 1 {
			want = transcript.ReportOnly
		}
		if ev.Turn != want {
			t.Errorf("event %d (%v %q) has turn %q; want %q", i, ev.Kind, ev.Text, ev.Turn, want)
		}
	}
	if got[8].Text != "REPORT now" || got[8].Turn != transcript.ReportOnly {
		t.Errorf("event 8 = %+v; want the report prompt, report-only", got[8])
	}
	// A second range reads from the start again.
	if again := collect(t, seq); len(again) != len(got) {
		t.Errorf("second range: %d events; want %d", len(again), len(got))
	}
}

// A transcript longer than a batch is read whole, in order; a consumer
// that stops early stops the read; a cancelled context ends it with ctx's
// error.
func TestTranscriberReadsInBatches(t *testing.T) {
	e := newEngine(t, exec.Options{Profile: agentProfile("-after", "exit")})
	for range 40 { // 7 events a launch: 280 events, more than one batch
		runTurn(t, e, engine.StartRequest{Session: "s1", Prompt: "again", Turn: transcript.Normal})
	}
	want := events(t, e, "s1")
	seq, err := e.Transcript(testCtx(t), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, collect(t, seq)); d != "" {
		t.Fatalf("(-file +Transcript):\n%s", d)
	}
	n := 0
	for range seq {
		if n++; n == 3 {
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	seq, err = e.Transcript(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for _, err := range seq {
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("cancelled read ended with %v; want context.Canceled", last)
	}
}

func TestTranscriberWithoutTranscript(t *testing.T) {
	e := newEngine(t, exec.Options{Profile: agentProfile()})
	_, err := e.Transcript(testCtx(t), "nobody")
	if !errors.Is(err, engine.ErrNoTranscript) || !errors.Is(err, baton.ErrNotFound) {
		t.Fatalf("Transcript(unknown) error = %v; want engine.ErrNoTranscript (ENOTFOUND)", err)
	}
}
