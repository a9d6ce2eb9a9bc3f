package enginetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/batonhq/baton/engine"
	"github.com/batonhq/baton/engine/enginetest"
	"github.com/batonhq/baton/transcript"
)

func TestTranscriptFromScripts(t *testing.T) {
	log := &submitLog{}
	e, _ := newEngine(t, enginetest.Options{Submit: log.submit})
	ctx := context.Background()
	if _, err := e.Transcript(ctx, "s1"); !errors.Is(err, engine.ErrNoTranscript) {
		t.Fatalf("Transcript before any start: %v; want engine.ErrNoTranscript", err)
	}
	r := req("ws")
	r.Session, r.Prompt = "s1", "fix the parser"
	e.Push(enginetest.Script{Reply: "fixed", EndAfterReady: true})
	p := start(t, e, r)
	<-p.Done()
	rr, cred := reportReq("ws")
	log.want = cred
	rr.Session, rr.Prompt = "s1", "write the report"
	e.Push(enginetest.Script{Reply: "report submitted", Report: "## Report", ReportToken: enginetest.RightToken})
	p = start(t, e, rr)
	<-p.Done()
	seq, err := e.Transcript(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var got []transcript.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	msg := func(sp transcript.Speaker, text string, turn transcript.Turn) transcript.Event {
		return transcript.Event{Speaker: sp, Kind: transcript.Message, Text: text, Turn: turn}
	}
	want := []transcript.Event{
		msg(transcript.User, "fix the parser", transcript.Normal),
		msg(transcript.Agent, "fixed", transcript.Normal),
		msg(transcript.User, "write the report", transcript.ReportOnly),
		msg(transcript.Agent, "report submitted", transcript.ReportOnly),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("transcript (-want +got):\n%s", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	seq, _ = e.Transcript(cctx, "s1")
	cancel()
	var last error
	for _, err := range seq {
		last = err
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("a cancelled read ended with %v; want context.Canceled", last)
	}
}
