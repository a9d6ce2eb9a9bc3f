package workspace

import (
	"errors"
	"strings"
	"testing"

	"github.com/batonhq/baton/transcript"
)

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
	events, errf := until(seq)
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
}
