package transcript_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/batonhq/baton/transcript"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		got  interface{ String() string }
		want string
	}{
		{transcript.User, "User"},
		{transcript.Agent, "Agent"},
		{transcript.Speaker(0), "Speaker(0)"},
		{transcript.Message, "Message"},
		{transcript.ToolCall, "ToolCall"},
		{transcript.Lifecycle, "Lifecycle"},
		{transcript.Note, "Note"},
		{transcript.Kind(9), "Kind(9)"},
	} {
		if s := tc.got.String(); s != tc.want {
			t.Errorf("String() = %q, want %q", s, tc.want)
		}
	}
}

func TestUntil(t *testing.T) {
	boom := errors.New("boom")
	seq := func(yield func(transcript.Event, error) bool) {
		for _, s := range []string{"a", "b"} {
			if !yield(transcript.Event{Text: s}, nil) {
				return
			}
		}
		yield(transcript.Event{}, boom)
	}
	events, errf := transcript.Until(seq)
	var got []string
	for ev := range events {
		got = append(got, ev.Text)
	}
	if strings.Join(got, ",") != "a,b" || !errors.Is(errf(), boom) {
		t.Fatalf("got %v, %v; want a,b and boom", got, errf())
	}
	for range events {
		break // stopped early, before the error
	}
	if errf() != nil {
		t.Fatalf("error after an early stop: %v", errf())
	}
	if ev, errf := transcript.Until(nil); ev != nil || errf() != nil {
		t.Fatal("Until(nil) is not nil")
	}
}
